// `limit` on a route and on [site], and [site] limit_table.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

std::string routeLimitErrors(const std::string& limit) {
  return snippetErrors("[[route]]\nrespond = {}\nlimit = " + limit + "\n");
}

LimitConfig routeLimitOf(const std::string& limit) {
  SiteConfig site = loadSnippet("[[route]]\nrespond = {}\nlimit = " + limit + "\n");
  return site.routes.empty() || !site.routes[0].limit ? LimitConfig{} : *site.routes[0].limit;
}

TEST(LimitKeys, AbsentMeansNone) {
  SiteConfig site = loadSnippet("[[route]]\nrespond = {}\n");
  EXPECT_FALSE(site.routes[0].limit.has_value());
  EXPECT_FALSE(site.limit.has_value());
  EXPECT_EQ(site.limit_table, kDefaultLimitTable);
  EXPECT_FALSE(hasLimits(site));
}

TEST(LimitKeys, RouteLimit) {
  LimitConfig l =
      routeLimitOf("{ rate = \"10r/m\", burst = 5, connections = 4, key = \"X-Api-Key\" }");
  EXPECT_EQ(l.rate, 10u);
  EXPECT_EQ(l.per_seconds, 60u);
  EXPECT_EQ(l.burst, 5u);
  EXPECT_EQ(l.connections, 4u);
  EXPECT_EQ(l.key, "x-api-key");
  EXPECT_EQ(l.where.line, 3u);

  LimitConfig s = routeLimitOf("{ rate = \"100r/s\" }");
  EXPECT_EQ(s.rate, 100u);
  EXPECT_EQ(s.per_seconds, 1u);
  EXPECT_EQ(s.burst, 0u);
  EXPECT_EQ(s.connections, 0u);
  EXPECT_EQ(s.key, "");

  LimitConfig c = routeLimitOf("{ connections = 1 }");
  EXPECT_EQ(c.rate, 0u);
  EXPECT_EQ(c.connections, 1u);
}

TEST(LimitKeys, SiteLimitAndTable) {
  SiteConfig site = loadSnippet(
      "[site]\nlimit = { rate = \"100r/s\", burst = 50 }\nlimit_table = \"2m\"\n"
      "[[route]]\nrespond = {}\n");
  ASSERT_TRUE(site.limit.has_value());
  EXPECT_EQ(site.limit->rate, 100u);
  EXPECT_EQ(site.limit->burst, 50u);
  EXPECT_EQ(site.limit_table, uint64_t{2} << 20);
  EXPECT_FALSE(site.routes[0].limit.has_value());  // it inherits at snapshot build
  EXPECT_TRUE(hasLimits(site));
}

TEST(LimitKeys, BadRates) {
  EXPECT_EQ(routeLimitErrors("{ rate = \"10\" }"),
            "t.toml:3:18: route.limit.rate: invalid rate \"10\" (expected requests per second or "
            "minute, e.g. \"10r/s\" or \"30r/m\")");
  EXPECT_EQ(routeLimitErrors("{ rate = \"10r/h\" }"),
            "t.toml:3:18: route.limit.rate: invalid rate \"10r/h\" (expected requests per second "
            "or minute, e.g. \"10r/s\" or \"30r/m\")");
  EXPECT_EQ(routeLimitErrors("{ rate = \"r/s\" }"),
            "t.toml:3:18: route.limit.rate: invalid rate \"r/s\" (expected requests per second "
            "or minute, e.g. \"10r/s\" or \"30r/m\")");
  EXPECT_EQ(routeLimitErrors("{ rate = \"-1r/s\" }"),
            "t.toml:3:18: route.limit.rate: invalid rate \"-1r/s\" (expected requests per second "
            "or minute, e.g. \"10r/s\" or \"30r/m\")");
  EXPECT_EQ(routeLimitErrors("{ rate = \"0r/s\" }"),
            "t.toml:3:18: route.limit.rate: the rate must be between 1 and 1000000 requests, "
            "found 0");
  EXPECT_EQ(routeLimitErrors("{ rate = \"2000000r/m\" }"),
            "t.toml:3:18: route.limit.rate: the rate must be between 1 and 1000000 requests, "
            "found 2000000");
  EXPECT_EQ(routeLimitErrors("{ rate = 10 }"),
            "t.toml:3:18: route.limit.rate: expected a string, found an integer");
}

TEST(LimitKeys, BadBurstConnectionsKey) {
  EXPECT_EQ(routeLimitErrors("{ rate = \"1r/s\", burst = -1 }"),
            "t.toml:3:34: route.limit.burst: must be between 0 and 1000000, found -1");
  EXPECT_EQ(routeLimitErrors("{ connections = 0 }"),
            "t.toml:3:25: route.limit.connections: must be between 1 and 1000000, found 0");
  EXPECT_EQ(routeLimitErrors("{ connections = \"4\" }"),
            "t.toml:3:25: route.limit.connections: expected an integer, found a string");
  EXPECT_EQ(routeLimitErrors("{ connections = 2, burst = 3 }"),
            "t.toml:3:36: route.limit.burst: only goes with a rate");
  EXPECT_EQ(routeLimitErrors("{ connections = 2, key = \"bad key\" }"),
            "t.toml:3:34: route.limit.key: \"bad key\" is not a header name (leave key out to "
            "count per client address)");
  EXPECT_EQ(routeLimitErrors("{ connections = 2, key = \"\" }"),
            "t.toml:3:34: route.limit.key: \"\" is not a header name (leave key out to count per "
            "client address)");
}

TEST(LimitKeys, NeedsRateOrConnections) {
  EXPECT_EQ(routeLimitErrors("{ key = \"x-api-key\" }"),
            "t.toml:3:9: route.limit: needs a rate, connections or both");
  EXPECT_EQ(routeLimitErrors("{}"), "t.toml:3:9: route.limit: needs a rate, connections or both");
  EXPECT_EQ(routeLimitErrors("\"10r/s\""),
            "t.toml:3:9: route.limit: expected a table, found a string");
  EXPECT_EQ(routeLimitErrors("{ rate = \"1r/s\", ratee = 1 }"),
            "t.toml:3:26: route.limit: unknown key \"ratee\" (did you mean \"rate\"?)");
}

TEST(LimitKeys, BadSiteValues) {
  EXPECT_EQ(snippetErrors("[site]\nlimit = { rate = \"1r/x\" }\n"),
            "t.toml:2:18: site.limit.rate: invalid rate \"1r/x\" (expected requests per second or "
            "minute, e.g. \"10r/s\" or \"30r/m\")");
  EXPECT_EQ(snippetErrors("[site]\nlimit_table = \"1k\"\n"),
            "t.toml:2:15: site.limit_table: must be between 64k and 1g, found 1024");
  EXPECT_EQ(snippetErrors("[site]\nlimit_table = \"2g\"\n"),
            "t.toml:2:15: site.limit_table: must be between 64k and 1g, found 2147483648");
  EXPECT_EQ(snippetErrors("[site]\nlimit_table = \"lots\"\n"),
            "t.toml:2:15: site.limit_table: invalid size \"lots\" (expected a byte count, "
            "optionally with a k, m or g suffix, e.g. \"64k\" or \"10m\")");
}

TEST(LimitKeys, NotWithRewrite) {
  EXPECT_EQ(snippetErrors("[[route]]\nrewrite = \"/b\"\nlimit = { connections = 1 }\n"),
            "t.toml:3:1: route: \"limit\" cannot go with rewrite (routing starts again with the "
            "new path: put it on the route that path matches)");
}

}  // namespace
}  // namespace scalws::common::config
