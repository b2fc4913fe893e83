#include "common/config/listen_address.h"

#include <gtest/gtest.h>

namespace scalws::common::config {
namespace {

ListenAddress parsedAddress(std::string_view text) {
  Result<ListenAddress> r = parseListenAddress(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : ListenAddress{};
}

std::string refusedAddress(std::string_view text) {
  Result<ListenAddress> r = parseListenAddress(text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "ok" : r.status().message();
}

TEST(ListenAddress, Ipv4) {
  ListenAddress a = parsedAddress("127.0.0.1:8080");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8080);
  EXPECT_FALSE(a.v6);
  EXPECT_EQ(parsedAddress("0.0.0.0:80").host, "0.0.0.0");
  EXPECT_EQ(parsedAddress("1.2.3.4:65535").port, 65535);
  EXPECT_EQ(parsedAddress("1.2.3.4:1").port, 1);
}

TEST(ListenAddress, StarIsEveryIpv4Address) {
  ListenAddress a = parsedAddress("*:8080");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_FALSE(a.v6);
}

TEST(ListenAddress, Ipv6IsBracketedAndCanonicalised) {
  ListenAddress a = parsedAddress("[::]:8443");
  EXPECT_EQ(a.host, "::");
  EXPECT_EQ(a.port, 8443);
  EXPECT_TRUE(a.v6);
  EXPECT_EQ(parsedAddress("[0:0:0:0:0:0:0:1]:80").host, "::1");
  EXPECT_EQ(parsedAddress("[2001:DB8::1]:80").host, "2001:db8::1");
}

TEST(ListenAddress, Refusals) {
  const std::string expected = "(expected \"host:port\", e.g. \"127.0.0.1:8080\" or \"[::]:8443\")";
  EXPECT_EQ(refusedAddress(""), "address \"\" has no port " + expected);
  EXPECT_EQ(refusedAddress("127.0.0.1"), "address \"127.0.0.1\" has no port " + expected);
  EXPECT_EQ(refusedAddress("[::1]"), "address \"[::1]\" has no port " + expected);
  EXPECT_EQ(refusedAddress("[::1]8080"), "address \"[::1]8080\" has no port " + expected);
  EXPECT_EQ(refusedAddress("[::1:8080"), "address \"[::1:8080\" has no closing \"]\" " + expected);
  EXPECT_EQ(refusedAddress("::1:8080"),
            "address \"::1:8080\": an IPv6 host is written in brackets, e.g. \"[::1]:8080\"");
  EXPECT_EQ(refusedAddress("127.0.0.1:0"), "port must be between 1 and 65535, found \"0\"");
  EXPECT_EQ(refusedAddress("127.0.0.1:65536"), "port must be between 1 and 65535, found \"65536\"");
  EXPECT_EQ(refusedAddress("127.0.0.1:"), "port must be between 1 and 65535, found \"\"");
  EXPECT_EQ(refusedAddress("127.0.0.1:http"), "port must be between 1 and 65535, found \"http\"");
  EXPECT_EQ(refusedAddress("127.0.0.1:-80"), "port must be between 1 and 65535, found \"-80\"");
  EXPECT_EQ(refusedAddress("127.0.0.1:0000080"),
            "port must be between 1 and 65535, found \"0000080\"");
  const std::string literal =
      " address (host names are not resolved; use e.g. \"127.0.0.1\" or \"[::1]\")";
  EXPECT_EQ(refusedAddress("localhost:80"), "host \"localhost\" is not a literal IPv4" + literal);
  EXPECT_EQ(refusedAddress(":80"), "host \"\" is not a literal IPv4" + literal);
  EXPECT_EQ(refusedAddress("256.0.0.1:80"), "host \"256.0.0.1\" is not a literal IPv4" + literal);
  EXPECT_EQ(refusedAddress("[*]:80"), "host \"*\" is not a literal IPv6" + literal);
  EXPECT_EQ(refusedAddress("[127.0.0.1]:80"), "host \"127.0.0.1\" is not a literal IPv6" + literal);
  EXPECT_EQ(refusedAddress("[fe80::1%eth0]:80"),
            "host \"fe80::1%eth0\" is not a literal IPv6" + literal);
  EXPECT_EQ(refusedAddress(std::string_view("1.2.3.4\0:80", 10)),
            std::string("host \"1.2.3.4\0\" is not a literal IPv4", 37) + literal);
}

}  // namespace
}  // namespace scalws::common::config
