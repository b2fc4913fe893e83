// route.respond: status, body, headers.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

const RespondAction& respondOf(const SiteConfig& site) {
  static const RespondAction kNone;
  const auto* action =
      site.routes.empty() ? nullptr : std::get_if<RespondAction>(&site.routes[0].action);
  EXPECT_NE(action, nullptr);
  return action == nullptr ? kNone : *action;
}

TEST(RespondAction, Defaults) {
  SiteConfig site = loadSnippet("[[route]]\nrespond = {}\n");
  EXPECT_EQ(respondOf(site).status, 200);
  EXPECT_EQ(respondOf(site).body, "");
  EXPECT_TRUE(respondOf(site).headers.empty());
}

TEST(RespondAction, Status) {
  EXPECT_EQ(respondOf(loadSnippet("[[route]]\nrespond = { status = 599 }\n")).status, 599);
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { status = 42 }\n"),
            "t.toml:2:22: route.respond.status: must be between 200 and 599, found 42");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { status = 100 }\n"),
            "t.toml:2:22: route.respond.status: must be between 200 and 599, found 100");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { status = 600 }\n"),
            "t.toml:2:22: route.respond.status: must be between 200 and 599, found 600");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { status = \"200\" }\n"),
            "t.toml:2:22: route.respond.status: expected an integer, found a string");
}

TEST(RespondAction, Body) {
  EXPECT_EQ(respondOf(loadSnippet("[[route]]\nrespond = { body = \"a\\u0000b\" }\n")).body,
            std::string("a\0b", 3));
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { body = 1 }\n"),
            "t.toml:2:20: route.respond.body: expected a string, found an integer");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { status = 204, body = \"x\" }\n"),
            "t.toml:2:34: route.respond.body: must be empty with status 204 (a 204 response has "
            "no body)");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { status = 304, body = \"x\" }\n"),
            "t.toml:2:34: route.respond.body: must be empty with status 304 (a 304 response has "
            "no body)");
}

TEST(RespondAction, Headers) {
  SiteConfig site = loadSnippet(
      "[[route]]\n[route.respond.headers]\nZ-Last = \"1\"\nA-First = \"two words\"\n"
      "Server = \"custom\"\n");
  ASSERT_EQ(respondOf(site).headers.size(), 3u);
  EXPECT_EQ(respondOf(site).headers[0].name, "Z-Last");  // file order
  EXPECT_EQ(respondOf(site).headers[1].name, "A-First");
  EXPECT_EQ(respondOf(site).headers[1].value, "two words");
  EXPECT_EQ(respondOf(site).headers[2].name, "Server");

  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { headers = [\"a\"] }\n"),
            "t.toml:2:23: route.respond.headers: expected a table, found an array");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { headers = { \"bad name\" = \"x\" } }\n"),
            "t.toml:2:25: route.respond.headers: \"bad name\" is not a valid header name");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { headers = { \"\" = \"x\" } }\n"),
            "t.toml:2:25: route.respond.headers: \"\" is not a valid header name");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { headers = { X-A = 1 } }\n"),
            "t.toml:2:31: route.respond.headers.X-A: expected a string, found an integer");
  EXPECT_EQ(
      snippetErrors("[[route]]\nrespond = { headers = { X-A = \"a\\r\\nSet-Cookie: x\" } }\n"),
      "t.toml:2:31: route.respond.headers.X-A: must not contain CR, LF, NUL or other "
      "control characters");
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { headers = { X-A = \"a\\u0000\" } }\n"),
            "t.toml:2:31: route.respond.headers.X-A: must not contain CR, LF, NUL or other "
            "control characters");
}

TEST(RespondAction, ReservedHeadersAreRefused) {
  EXPECT_EQ(snippetErrors("[[route]]\n[route.respond.headers]\nContent-Length = \"1\"\n"
                          "transfer-encoding = \"chunked\"\nCONNECTION = \"close\"\n"
                          "Date = \"x\"\n"),
            "t.toml:3:1: route.respond.headers: \"Content-Length\" is computed by the server and "
            "cannot be set\n"
            "t.toml:4:1: route.respond.headers: \"transfer-encoding\" is computed by the server "
            "and cannot be set\n"
            "t.toml:5:1: route.respond.headers: \"CONNECTION\" is computed by the server and "
            "cannot be set\n"
            "t.toml:6:1: route.respond.headers: \"Date\" is computed by the server and cannot be "
            "set");
}

TEST(RespondAction, UnknownKey) {
  EXPECT_EQ(snippetErrors("[[route]]\nrespond = { code = 200 }\n"),
            "t.toml:2:13: route.respond: unknown key \"code\" (expected one of: status, body, "
            "headers)");
}

}  // namespace
}  // namespace scalws::common::config
