#include "worker/router/router.h"

#include <gtest/gtest.h>

namespace scalws::worker {
namespace {

using common::config::RouteConfig;

RouteConfig route(std::optional<std::string> exact, std::optional<std::string> prefix,
                  std::optional<std::string> suffix, std::vector<std::string> hosts = {},
                  std::vector<std::string> methods = {}) {
  RouteConfig r;
  r.match.exact = std::move(exact);
  r.match.prefix = std::move(prefix);
  r.match.suffix = std::move(suffix);
  r.match.hosts = std::move(hosts);
  r.match.methods = std::move(methods);
  return r;
}

Request request(std::string_view path, std::string_view host = "",
                std::string_view method = "GET") {
  Request r;
  r.path = path;
  r.host = host;
  r.method_name = method;
  return r;
}

TEST(RouterTest, FirstMatchingRouteInConfigOrderWins) {
  std::vector<RouteConfig> routes = {
      route(std::nullopt, "/api/", std::nullopt, {"api.example.com"}),  // 0
      route("/health", std::nullopt, std::nullopt),                     // 1
      route(std::nullopt, std::nullopt, ".php"),                        // 2
      route(std::nullopt, "/api/", std::nullopt),                       // 3
      route(std::nullopt, "/", std::nullopt, {}, {"POST"}),             // 4
      route(std::nullopt, "/", std::nullopt),                           // 5
  };
  Router router(routes);
  EXPECT_EQ(router.match(request("/api/x", "api.example.com")), 0);
  EXPECT_EQ(router.match(request("/api/x", "other")), 3);
  EXPECT_EQ(router.match(request("/health")), 1);
  EXPECT_EQ(router.match(request("/api/x.php")), 2);  // suffix route precedes the prefix
  EXPECT_EQ(router.match(request("/x", "", "POST")), 4);
  EXPECT_EQ(router.match(request("/x")), 5);
  EXPECT_EQ(router.match(request("/healthz")), 5);
}

TEST(RouterTest, WildcardHosts) {
  std::vector<RouteConfig> routes = {
      route(std::nullopt, std::nullopt, std::nullopt, {"*.example.com", "exact.org"})};
  Router router(routes);
  EXPECT_EQ(router.match(request("/", "a.example.com")), 0);
  EXPECT_EQ(router.match(request("/", "a.b.example.com")), 0);
  EXPECT_EQ(router.match(request("/", "example.com")), -1);
  EXPECT_EQ(router.match(request("/", "badexample.com")), -1);
  EXPECT_EQ(router.match(request("/", "exact.org")), 0);
  EXPECT_EQ(router.match(request("/", "")), -1);
}

TEST(RouterTest, GetRoutesAnswerHead) {
  std::vector<RouteConfig> routes = {route("/x", std::nullopt, std::nullopt, {}, {"GET"})};
  Router router(routes);
  EXPECT_EQ(router.match(request("/x", "", "HEAD")), 0);
  EXPECT_EQ(router.match(request("/x", "", "POST")), -1);
}

TEST(RouterTest, NoRoutesMeansNotFound) {
  std::vector<RouteConfig> routes;
  Router router(routes);
  EXPECT_EQ(router.match(request("/")), -1);
}

TEST(RouterTest, ManyPrefixLengths) {
  std::vector<RouteConfig> routes;
  for (int i = 0; i < 50; ++i) {
    routes.push_back(route(std::nullopt, "/p" + std::to_string(i) + "/", std::nullopt));
  }
  Router router(routes);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(router.match(request("/p" + std::to_string(i) + "/file")), i);
  }
  EXPECT_EQ(router.match(request("/p50/file")), -1);
}

RouteConfig regexRoute(const char* pattern, std::optional<std::string> prefix = std::nullopt) {
  RouteConfig r;
  r.match.prefix = std::move(prefix);
  auto regex = common::Regex::compile(pattern);
  EXPECT_TRUE(regex.ok()) << regex.status().message();
  r.match.regex = std::move(regex).value();
  return r;
}

TEST(RouterTest, RegexRoutesMatchInOrderWithTheirGroups) {
  std::vector<RouteConfig> routes = {
      regexRoute("^/blog/(\\d+)$"),                       // 0
      route("/blog/latest", std::nullopt, std::nullopt),  // 1
      regexRoute("^/blog/(\\w+)$"),                       // 2
      regexRoute("\\.(png|jpg)$", std::string("/img/")),  // 3: prefix and regex
      route(std::nullopt, "/", std::nullopt),             // 4
  };
  Router router(routes);
  EXPECT_TRUE(router.hasRegex());
  common::RegexCaptures c;
  EXPECT_EQ(router.match(request("/blog/42"), &c), 0);
  EXPECT_EQ(c.groups[1], "42");
  EXPECT_EQ(router.match(request("/blog/latest"), &c), 1);
  EXPECT_EQ(c.groups[1], "");  // the winner has no regex: nothing left behind
  EXPECT_EQ(router.match(request("/blog/news"), &c), 2);
  EXPECT_EQ(c.groups[1], "news");
  EXPECT_EQ(router.match(request("/img/a.png"), &c), 3);
  EXPECT_EQ(c.groups[1], "png");
  EXPECT_EQ(router.match(request("/img/a.gif"), &c), 4);
  EXPECT_EQ(router.match(request("/other/a.png"), &c), 4);  // the prefix must hold too
  EXPECT_EQ(router.match(request("/blog/42")), 0);          // without captures asked for
}

TEST(RouterTest, AnEarlierPlainRouteBeatsALaterRegexOne) {
  std::vector<RouteConfig> routes = {
      route(std::nullopt, std::nullopt, ".php"),  // 0: a general route before the regex
      regexRoute("^/(.*)$"),                      // 1
  };
  Router router(routes);
  common::RegexCaptures c;
  EXPECT_EQ(router.match(request("/x.php"), &c), 0);
  EXPECT_EQ(c.groups[0], "");
  EXPECT_EQ(router.match(request("/x"), &c), 1);
  EXPECT_EQ(c.groups[1], "x");
}

TEST(RouterTest, SchemeIsTheConnections) {
  std::vector<RouteConfig> routes = {route(std::nullopt, "/", std::nullopt),
                                     route(std::nullopt, "/", std::nullopt)};
  routes[0].match.scheme = common::config::MatchConfig::Scheme::kHttp;
  Router router(routes);
  PeerInfo plain;
  PeerInfo tls;
  tls.tls = true;
  Request r = request("/x");
  r.peer = &plain;
  EXPECT_EQ(router.match(r), 0);
  r.peer = &tls;
  EXPECT_EQ(router.match(r), 1);
}

TEST(RouterTest, NoRegexNoCaptures) {
  std::vector<RouteConfig> routes = {route(std::nullopt, "/", std::nullopt)};
  Router router(routes);
  EXPECT_FALSE(router.hasRegex());
}

}  // namespace
}  // namespace scalws::worker
