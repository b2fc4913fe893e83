// route.proxy: the upstream it names, host modes, header settings, and the bad values.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

const char kUpstream[] = "[upstream.api]\nservers = [\"127.0.0.1:9000\"]\n";

ProxyAction proxyOf(const std::string& inline_table) {
  SiteConfig site = loadSnippet("[[route]]\nproxy = " + inline_table + "\n" + kUpstream);
  EXPECT_EQ(site.routes.size(), 1u);
  const auto* proxy =
      site.routes.empty() ? nullptr : std::get_if<ProxyAction>(&site.routes[0].action);
  EXPECT_NE(proxy, nullptr);
  return proxy != nullptr ? *proxy : ProxyAction{};
}

TEST(ProxyAction, Defaults) {
  ProxyAction p = proxyOf("{ upstream = \"api\" }");
  EXPECT_EQ(p.upstream, "api");
  EXPECT_EQ(p.strip_prefix, "");
  EXPECT_EQ(p.host_mode, ProxyAction::HostMode::kPass);
  EXPECT_TRUE(p.set_request_headers.empty());
  EXPECT_TRUE(p.set_response_headers.empty());
  EXPECT_TRUE(p.remove_response_headers.empty());
  EXPECT_FALSE(p.timeout.has_value());
  EXPECT_FALSE(p.via);
  EXPECT_TRUE(p.websocket);
  EXPECT_EQ(p.where.toString(), "/etc/scalws/t.toml:2:9");
}

TEST(ProxyAction, EveryKey) {
  ProxyAction p = proxyOf(
      "{ upstream = \"api\", strip_prefix = \"/api/\", host = \"Api.Internal:8080\", "
      "set_request_headers = { \"X-Site\" = \"shop\" }, set_response_headers = { \"X-Via\" = "
      "\"edge\" }, remove_response_headers = [\"Server\", \"x-powered-by\"], timeout = \"30s\", "
      "via = true, websocket = false }");
  EXPECT_EQ(p.strip_prefix, "/api");
  EXPECT_EQ(p.host_mode, ProxyAction::HostMode::kFixed);
  EXPECT_EQ(p.host, "api.internal:8080");
  ASSERT_EQ(p.set_request_headers.size(), 1u);
  EXPECT_EQ(p.set_request_headers[0].name, "x-site");
  EXPECT_EQ(p.set_request_headers[0].value, "shop");
  ASSERT_EQ(p.set_response_headers.size(), 1u);
  EXPECT_EQ(p.set_response_headers[0].name, "x-via");
  EXPECT_EQ(p.remove_response_headers, (std::vector<std::string>{"server", "x-powered-by"}));
  EXPECT_EQ(p.timeout, 30'000u);
  EXPECT_TRUE(p.via);
  EXPECT_FALSE(p.websocket);
  EXPECT_EQ(proxyOf("{ upstream = \"api\", host = \"upstream\" }").host_mode,
            ProxyAction::HostMode::kUpstream);
  EXPECT_EQ(proxyOf("{ upstream = \"api\", strip_prefix = \"/\" }").strip_prefix, "");
}

TEST(ProxyAction, RefusesBadValues) {
  const std::string tail = std::string("\n") + kUpstream;
  EXPECT_EQ(snippetErrors("[[route]]\nproxy = {}" + tail),
            "t.toml:2:9: route.proxy: missing required key \"upstream\"");
  EXPECT_EQ(snippetErrors("[[route]]\nproxy = { upstream = \"web\" }" + tail),
            "t.toml:2:9: route.proxy.upstream: no [upstream.web] in this config");
  EXPECT_EQ(
      snippetErrors("[[route]]\nproxy = { upstream = \"api\", strip_prefix = \"api\" }" + tail),
      "t.toml:2:44: route.proxy.strip_prefix: must be a path starting with \"/\" (no "
      "spaces, '?', '#' or control characters)");
  EXPECT_EQ(snippetErrors("[[route]]\nproxy = { upstream = \"api\", host = \"a b\" }" + tail),
            "t.toml:2:36: route.proxy.host: expected \"pass\", \"upstream\" or a host name such "
            "as \"api.internal\", found \"a b\"");
  EXPECT_EQ(snippetErrors("[[route]]\nproxy = { upstream = \"api\", set_request_headers = { "
                          "\"Content-Length\" = \"1\" } }" +
                          tail),
            "t.toml:2:53: route.proxy.set_request_headers: \"Content-Length\" is computed by the "
            "proxy and cannot be set");
  EXPECT_EQ(snippetErrors("[[route]]\nproxy = { upstream = \"api\", set_request_headers = { "
                          "\"Host\" = \"x\" } }" +
                          tail),
            "t.toml:2:53: route.proxy.set_request_headers: \"Host\" is computed by the proxy and "
            "cannot be set");
  EXPECT_EQ(snippetErrors("[[route]]\nproxy = { upstream = \"api\", set_response_headers = { "
                          "\"X-A\" = \"a\\nb\" } }" +
                          tail),
            "t.toml:2:62: route.proxy.set_response_headers.X-A: must not contain CR, LF, NUL or "
            "other control characters");
  EXPECT_EQ(snippetErrors("[[route]]\nproxy = { upstream = \"api\", remove_response_headers = "
                          "[\"a b\"] }" +
                          tail),
            "t.toml:2:55: route.proxy.remove_response_headers: \"a b\" is not a valid header "
            "name");
  EXPECT_EQ(snippetErrors("[[route]]\nproxy = { upstream = \"api\", timeout = 0 }" + tail),
            "t.toml:2:39: route.proxy.timeout: must be greater than zero");
  EXPECT_NE(snippetErrors("[[route]]\nproxy = { upstream = \"api\", cache = \"pages\" }" + tail)
                .find("route.proxy: unknown key \"cache\""),
            std::string::npos);
}

}  // namespace
}  // namespace scalws::common::config
