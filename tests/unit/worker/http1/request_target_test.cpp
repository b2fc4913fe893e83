#include "worker/http1/request_target.h"

#include <gtest/gtest.h>

namespace scalws::worker::http1 {
namespace {

TEST(RequestTargetTest, Forms) {
  RequestTarget t;
  ASSERT_TRUE(parseRequestTarget("/a?b=c", Method::kGet, t));
  EXPECT_EQ(t.form, RequestTarget::Form::kOrigin);
  EXPECT_EQ(t.path, "/a");
  EXPECT_EQ(t.query, "b=c");

  ASSERT_TRUE(parseRequestTarget("http://Example.com:8080/p/q?x", Method::kGet, t));
  EXPECT_EQ(t.form, RequestTarget::Form::kAbsolute);
  EXPECT_EQ(t.authority_host, "Example.com");
  EXPECT_EQ(t.path, "/p/q");
  EXPECT_EQ(t.query, "x");

  ASSERT_TRUE(parseRequestTarget("https://[::1]", Method::kGet, t));
  EXPECT_EQ(t.authority_host, "[::1]");
  EXPECT_EQ(t.path, "/");

  ASSERT_TRUE(parseRequestTarget("http://a?q", Method::kGet, t));
  EXPECT_EQ(t.path, "/");
  EXPECT_EQ(t.query, "q");

  ASSERT_TRUE(parseRequestTarget("*", Method::kOptions, t));
  EXPECT_EQ(t.form, RequestTarget::Form::kAsterisk);
  EXPECT_FALSE(parseRequestTarget("*", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("ftp://a/", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("http://user@a/", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("a/b", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("", Method::kGet, t));
}

TEST(RequestTargetTest, FragmentsAndNonAsciiBytesAreNotTargets) {
  RequestTarget t;
  EXPECT_FALSE(parseRequestTarget("/#x", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("/a?b#c", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("http://a/b#c", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("/caf\xc3\xa9", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("/\x80", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("/a\x7f", Method::kGet, t));
  EXPECT_FALSE(parseRequestTarget("http://h\xc3\xa9/", Method::kGet, t));
  // Percent-encoded, the same bytes are fine, and so are the characters clients send raw.
  EXPECT_TRUE(parseRequestTarget("/caf%C3%A9%23x", Method::kGet, t));
  EXPECT_TRUE(parseRequestTarget("/a|b{c}^d", Method::kGet, t));
}

TEST(RequestTargetTest, HostSyntax) {
  bool valid = false;
  EXPECT_EQ(hostWithoutPort("example.com:80", valid), "example.com");
  EXPECT_TRUE(valid);
  EXPECT_EQ(hostWithoutPort("[2001:db8::1]:443", valid), "[2001:db8::1]");
  EXPECT_TRUE(valid);
  hostWithoutPort("a b", valid);
  EXPECT_FALSE(valid);
  hostWithoutPort("a/b", valid);
  EXPECT_FALSE(valid);
  hostWithoutPort("a:80x", valid);
  EXPECT_FALSE(valid);
  hostWithoutPort("[zz::1]", valid);
  EXPECT_FALSE(valid);
  hostWithoutPort(":80", valid);
  EXPECT_FALSE(valid);
  hostWithoutPort("", valid);
  EXPECT_FALSE(valid);
}

}  // namespace
}  // namespace scalws::worker::http1
