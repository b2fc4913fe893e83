// [[route]]: shape, exactly one action, and route.match.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

TEST(RouteSection, MustBeAnArrayOfTables) {
  EXPECT_EQ(snippetErrors("[route]\nrespond = {}\n"),
            "t.toml:1:1: route: expected an array of tables ([[route]]), found a table");
  EXPECT_EQ(snippetErrors("route = [1]\n"),
            "t.toml:1:10: route: expected a table, found an integer");
}

TEST(RouteSection, RoutesKeepFileOrder) {
  SiteConfig site = loadSnippet(
      "[[route]]\nmatch = { prefix = \"/b\" }\nrespond = {}\n"
      "[[route]]\nmatch = { prefix = \"/a\" }\nrespond = {}\n");
  ASSERT_EQ(site.routes.size(), 2u);
  EXPECT_EQ(site.routes[0].match.prefix, "/b");
  EXPECT_EQ(site.routes[1].match.prefix, "/a");
  EXPECT_EQ(site.routes[1].where.toString(), "/etc/scalws/t.toml:4:1");
}

TEST(RouteSection, NeedsAnAction) {
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { prefix = \"/\" }\n"),
            "t.toml:1:1: route: no action (expected one of: respond, static, status, php, proxy, "
            "app, cache_purge, redirect, or a rewrite)");
}

TEST(RouteSection, TakesExactlyOneAction) {
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = {}\nstatic = { root = \"/srv\" }\n"),
            "t.toml:3:1: route: more than one action (\"respond\" and \"static\"); a route takes "
            "exactly one");
}

TEST(RouteSection, UnknownActionsAreUnknownKeys) {
  EXPECT_EQ(snippetErrors("[[route]]\nforward = { name = \"api\" }\n"),
            "t.toml:1:1: route: no action (expected one of: respond, static, status, php, proxy, "
            "app, cache_purge, redirect, or a rewrite)\n"
            "t.toml:2:1: route: unknown key \"forward\" (expected one of: match, respond, static, "
            "status, php, proxy, app, cache_purge, redirect, rewrite, policy, headers, errors, "
            "compress, auth, limit)");
  EXPECT_EQ(snippetErrors("[[route]]\nrespnd = {}\n"),
            "t.toml:1:1: route: no action (expected one of: respond, static, status, php, proxy, "
            "app, cache_purge, redirect, or a rewrite)\n"
            "t.toml:2:1: route: unknown key \"respnd\" (did you mean \"respond\"?)");
}

TEST(RouteSection, ActionMustBeATable) {
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = \"ok\"\n"),
            "t.toml:2:11: route.respond: expected a table, found a string");
}

TEST(RouteMatch, AbsentMatchesEverything) {
  SiteConfig site = loadSnippet("[[route]]\nrespond = {}\n");
  const MatchConfig& m = site.routes[0].match;
  EXPECT_FALSE(m.exact || m.prefix || m.suffix);
  EXPECT_TRUE(m.hosts.empty());
  EXPECT_TRUE(m.methods.empty());
}

TEST(RouteMatch, MustBeATable) {
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = \"/\"\nrespond = {}\n"),
            "t.toml:2:9: route.match: expected a table, found a string");
}

TEST(RouteMatch, UnknownKey) {
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { prefx = \"/\" }\nrespond = {}\n"),
            "t.toml:2:11: route.match: unknown key \"prefx\" (did you mean \"prefix\"?)");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { glob = \"/a*\" }\nrespond = {}\n"),
            "t.toml:2:11: route.match: unknown key \"glob\" (expected one of: exact, prefix, "
            "suffix, regex, host, method, scheme)");
}

TEST(RouteMatch, Paths) {
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { exact = \"health\" }\nrespond = {}\n"),
            "t.toml:2:19: route.match.exact: must start with \"/\", found \"health\"");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { prefix = \"\" }\nrespond = {}\n"),
            "t.toml:2:20: route.match.prefix: must start with \"/\", found \"\"");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { prefix = \"/a b\" }\nrespond = {}\n"),
            "t.toml:2:20: route.match.prefix: must not contain spaces or control characters");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { suffix = \"\" }\nrespond = {}\n"),
            "t.toml:2:20: route.match.suffix: must not be empty");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { suffix = \".php\\u0000\" }\nrespond = {}\n"),
            "t.toml:2:20: route.match.suffix: must not contain spaces or control characters");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { exact = 1 }\nrespond = {}\n"),
            "t.toml:2:19: route.match.exact: expected a string, found an integer");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { exact = \"/a\", prefix = \"/\" }\nrespond = {}\n"),
            "t.toml:2:9: route.match: exact cannot be combined with prefix or suffix (it already "
            "names one path)");
  SiteConfig site = loadSnippet("[[route]]\nmatch = { suffix = \".php\" }\nrespond = {}\n");
  EXPECT_EQ(site.routes[0].match.suffix, ".php");
}

TEST(RouteMatch, Hosts) {
  SiteConfig site = loadSnippet(
      "[[route]]\nmatch = { host = \"WWW.Example.com\" }\nrespond = {}\n"
      "[[route]]\nmatch = { host = [\"*.example.com\", \"[::1]\", \"a_b-c.test\"] }\n"
      "respond = {}\n");
  EXPECT_EQ(site.routes[0].match.hosts, (std::vector<std::string>{"www.example.com"}));
  EXPECT_EQ(site.routes[1].match.hosts,
            (std::vector<std::string>{"*.example.com", "[::1]", "a_b-c.test"}));

  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = \"example.com:8080\" }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: \"example.com:8080\" must not include a port (the "
            "host alone is matched)");
  EXPECT_EQ(
      snippetErrors("[[route]]\nmatch = { host = [\"a.test\", \"[::1]:80\"] }\nrespond = {}\n"),
      "t.toml:2:29: route.match.host[1]: \"[::1]:80\" must not include a port (the host "
      "alone is matched)");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = \"[zz]\" }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: \"[zz]\" is not a valid bracketed IPv6 address");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = \"a.*.com\" }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: \"a.*.com\": a wildcard is only allowed as a leading "
            "\"*.\" (\"*.example.com\")");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = \"*\" }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: \"*\": a wildcard is only allowed as a leading \"*.\" "
            "(\"*.example.com\")");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = \"a..b\" }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: \"a..b\" is not a valid host name");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = \"a b\" }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: \"a b\" is not a valid host name");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = \"\" }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: must not be empty");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = [] }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: must not be an empty array (leave host out to match "
            "any host)");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = [\"a\", 1] }\nrespond = {}\n"),
            "t.toml:2:24: route.match.host[1]: expected a string, found an integer");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { host = 1 }\nrespond = {}\n"),
            "t.toml:2:18: route.match.host: expected a string or an array of strings, found an "
            "integer");
}

TEST(RouteMatch, Methods) {
  SiteConfig site = loadSnippet("[[route]]\nmatch = { method = \"PURGE\" }\nrespond = {}\n");
  EXPECT_EQ(site.routes[0].match.methods, (std::vector<std::string>{"PURGE"}));
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { method = \"get\" }\nrespond = {}\n"),
            "t.toml:2:20: route.match.method: \"get\" must be upper-case (methods are "
            "case-sensitive)");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { method = [\"GET\", \"GE T\"] }\nrespond = {}\n"),
            "t.toml:2:28: route.match.method[1]: \"GE T\" is not a valid method token");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { method = [] }\nrespond = {}\n"),
            "t.toml:2:20: route.match.method: must not be an empty array (leave method out to "
            "match any method)");
}

}  // namespace
}  // namespace scalws::common::config
