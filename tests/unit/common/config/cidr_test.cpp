#include "common/config/cidr.h"

#include <gtest/gtest.h>

namespace scalws::common::config {
namespace {

Cidr parsed(std::string_view text) {
  Result<Cidr> r = parseCidr(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : Cidr{};
}

std::string refused(std::string_view text) {
  Result<Cidr> r = parseCidr(text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "ok" : r.status().message();
}

TEST(Cidr, Ipv4Ranges) {
  Cidr c = parsed("10.0.0.0/8");
  EXPECT_EQ(c.text, "10.0.0.0/8");
  EXPECT_FALSE(c.v6);
  EXPECT_EQ(c.prefix_len, 8);
  EXPECT_EQ(c.addr[0], 10);
  EXPECT_EQ(c.addr[1], 0);
  EXPECT_EQ(parsed("0.0.0.0/0").prefix_len, 0);
  EXPECT_EQ(parsed("192.168.1.128/25").prefix_len, 25);
}

TEST(Cidr, BareAddressIsOneHost) {
  Cidr v4 = parsed("127.0.0.1");
  EXPECT_EQ(v4.prefix_len, 32);
  EXPECT_EQ(v4.addr[3], 1);
  Cidr v6 = parsed("::1");
  EXPECT_TRUE(v6.v6);
  EXPECT_EQ(v6.prefix_len, 128);
  EXPECT_EQ(v6.addr[15], 1);
}

TEST(Cidr, Ipv6Ranges) {
  Cidr c = parsed("2001:db8::/32");
  EXPECT_TRUE(c.v6);
  EXPECT_EQ(c.prefix_len, 32);
  EXPECT_EQ(c.addr[0], 0x20);
  EXPECT_EQ(c.addr[3], 0xb8);
  EXPECT_EQ(parsed("::/0").prefix_len, 0);
  EXPECT_EQ(parsed("::1/128").prefix_len, 128);
}

TEST(Cidr, Refusals) {
  const std::string expected =
      " is not an address range (expected e.g. \"10.0.0.0/8\", \"::1/128\" or \"127.0.0.1\")";
  EXPECT_EQ(refused(""), "\"\"" + expected);
  EXPECT_EQ(refused("10.0.0/8"), "\"10.0.0/8\"" + expected);
  EXPECT_EQ(refused("example.com"), "\"example.com\"" + expected);
  EXPECT_EQ(refused("10.0.0.0/33"), "prefix length of \"10.0.0.0/33\" must be between 0 and 32");
  EXPECT_EQ(refused("::/129"), "prefix length of \"::/129\" must be between 0 and 128");
  EXPECT_EQ(refused("10.0.0.0/"), "prefix length of \"10.0.0.0/\" must be between 0 and 32");
  EXPECT_EQ(refused("10.0.0.0/-1"), "prefix length of \"10.0.0.0/-1\" must be between 0 and 32");
  EXPECT_EQ(refused("10.0.0.0/8/8"), "prefix length of \"10.0.0.0/8/8\" must be between 0 and 32");
  EXPECT_EQ(refused("10.0.0.1/8"),
            "\"10.0.0.1/8\" has bits set past the prefix length (did you mean \"10.0.0.0/8\"?)");
  EXPECT_EQ(refused("192.168.1.1/31"),
            "\"192.168.1.1/31\" has bits set past the prefix length "
            "(did you mean \"192.168.1.0/31\"?)");
  EXPECT_EQ(refused("2001:db8::1/64"),
            "\"2001:db8::1/64\" has bits set past the prefix length (did you mean "
            "\"2001:db8::/64\"?)");
}

}  // namespace
}  // namespace scalws::common::config
