// route.policy: max_body, timeout, allow.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

std::string policyErrors(const std::string& policy) {
  return snippetErrors("[[route]]\nrespond = {}\npolicy = " + policy + "\n");
}

RoutePolicy policyOf(const std::string& policy) {
  SiteConfig site = loadSnippet("[[route]]\nrespond = {}\npolicy = " + policy + "\n");
  return site.routes.empty() ? RoutePolicy{} : site.routes[0].policy;
}

TEST(RoutePolicy, AbsentMeansServerDefaults) {
  RoutePolicy p = loadSnippet("[[route]]\nrespond = {}\n").routes[0].policy;
  EXPECT_FALSE(p.max_body.has_value());
  EXPECT_FALSE(p.timeout.has_value());
  EXPECT_TRUE(p.allow.empty());
}

TEST(RoutePolicy, MaxBody) {
  EXPECT_EQ(policyOf("{ max_body = 0 }").max_body, 0u);
  EXPECT_EQ(policyOf("{ max_body = \"2g\" }").max_body, uint64_t{2} << 30);
  EXPECT_EQ(policyErrors("{ max_body = -10 }"),
            "t.toml:3:23: route.policy.max_body: must not be negative, found -10");
  EXPECT_EQ(policyErrors("{ max_body = \"10mb\" }"),
            "t.toml:3:23: route.policy.max_body: invalid size \"10mb\" (expected a byte count, "
            "optionally with a k, m or g suffix, e.g. \"64k\" or \"10m\")");
}

TEST(RoutePolicy, Timeout) {
  EXPECT_EQ(policyOf("{ timeout = 5 }").timeout, 5000u);
  EXPECT_EQ(policyErrors("{ timeout = 0 }"),
            "t.toml:3:22: route.policy.timeout: must be greater than zero");
  EXPECT_EQ(policyErrors("{ timeout = \"5 minutes\" }"),
            "t.toml:3:22: route.policy.timeout: invalid duration \"5 minutes\" (expected a number "
            "with a ms, s, m, h or d suffix, e.g. \"30s\" or \"500ms\"; a plain number is "
            "seconds)");
}

TEST(RoutePolicy, Allow) {
  RoutePolicy p = policyOf("{ allow = \"192.168.0.0/16\" }");
  ASSERT_EQ(p.allow.size(), 1u);
  EXPECT_EQ(p.allow[0].prefix_len, 16);
  EXPECT_EQ(policyErrors("{ allow = [\"10.0.0.0/8\", \"10.0.0.1/8\", \"nope\", 7] }"),
            "t.toml:3:35: route.policy.allow[1]: \"10.0.0.1/8\" has bits set past the prefix "
            "length (did you mean \"10.0.0.0/8\"?)\n"
            "t.toml:3:49: route.policy.allow[2]: \"nope\" is not an address range (expected e.g. "
            "\"10.0.0.0/8\", \"::1/128\" or \"127.0.0.1\")\n"
            "t.toml:3:57: route.policy.allow[3]: expected a string, found an integer");
  EXPECT_EQ(policyErrors("{ allow = [] }"),
            "t.toml:3:20: route.policy.allow: must not be an empty array (leave allow out to "
            "allow every client)");
}

TEST(RoutePolicy, ShapeAndUnknownKeys) {
  EXPECT_EQ(policyErrors("\"strict\""),
            "t.toml:3:10: route.policy: expected a table, found a string");
  EXPECT_EQ(policyErrors("{ deny = [\"10.0.0.0/8\"] }"),
            "t.toml:3:12: route.policy: unknown key \"deny\" (expected one of: max_body, timeout, "
            "allow)");
}

}  // namespace
}  // namespace scalws::common::config
