// The client address's text: IPv4 written by hand, checked against inet_ntop.
#include "worker/http/address_text.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <random>
#include <string>
#include <vector>

namespace scalws::worker {
namespace {

sockaddr_storage ipv4Address(uint32_t host_order) {
  sockaddr_storage a{};
  auto* sin = reinterpret_cast<sockaddr_in*>(&a);
  sin->sin_family = AF_INET;
  sin->sin_addr.s_addr = htonl(host_order);
  return a;
}

sockaddr_storage ipv6Address(const char* text) {
  sockaddr_storage a{};
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&a);
  sin6->sin6_family = AF_INET6;
  EXPECT_EQ(inet_pton(AF_INET6, text, &sin6->sin6_addr), 1) << text;
  return a;
}

std::string addressString(const sockaddr_storage& a, MappedV4 mapped = MappedV4::kDotted) {
  char buf[kAddressTextSize];
  return std::string(addressText(a, buf, mapped));
}

TEST(AddressText, Ipv4AsInetNtopWritesIt) {
  std::mt19937 random(7);
  std::vector<uint32_t> addresses = {0, 0xffffffffu, 0x7f000001u, 0x0a0014c7u, 0x09630a64u};
  for (int i = 0; i < 10000; ++i) addresses.push_back(random());
  for (uint32_t host_order : addresses) {
    in_addr in{htonl(host_order)};
    char expected[INET_ADDRSTRLEN];
    ASSERT_NE(inet_ntop(AF_INET, &in, expected, sizeof(expected)), nullptr);
    EXPECT_EQ(addressString(ipv4Address(host_order)), expected);
  }
}

TEST(AddressText, Ipv6AndMappedIpv4) {
  EXPECT_EQ(addressString(ipv6Address("2001:db8::1")), "2001:db8::1");
  EXPECT_EQ(addressString(ipv6Address("::1")), "::1");
  EXPECT_EQ(addressString(ipv6Address("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")),
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  EXPECT_EQ(addressString(ipv6Address("::ffff:192.0.2.10")), "192.0.2.10");
  EXPECT_EQ(addressString(ipv6Address("::ffff:192.0.2.10"), MappedV4::kAsIpv6),
            "::ffff:192.0.2.10");
}

TEST(AddressText, OtherFamiliesHaveNoText) {
  sockaddr_storage unix_address{};
  unix_address.ss_family = AF_UNIX;
  EXPECT_EQ(addressString(unix_address), "");
  EXPECT_EQ(addressString(sockaddr_storage{}), "");
}

}  // namespace
}  // namespace scalws::worker
