// A QUIC datagram as a front passes it to a worker loop: both families round-trip with
// ports, addresses, scope ids and ECN, and what is not one is refused.
#include "ipc/forwarded_datagram.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>
#include <vector>

namespace scalws::ipc {
namespace {

using common::net::Datagram;
using common::net::SocketAddress;

std::vector<uint8_t> message(const Datagram& d, std::vector<uint8_t> payload) {
  std::vector<uint8_t> out(kForwardedHeader);
  EXPECT_TRUE(encodeForwardedHeader(d, out.data()));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

SocketAddress v4(const char* address, uint16_t port) {
  SocketAddress a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  inet_pton(AF_INET, address, &in->sin_addr);
  a.len = sizeof(sockaddr_in);
  return a;
}

SocketAddress v6(const char* address, uint16_t port, uint32_t scope) {
  SocketAddress a;
  auto* in = reinterpret_cast<sockaddr_in6*>(&a.storage);
  in->sin6_family = AF_INET6;
  in->sin6_port = htons(port);
  inet_pton(AF_INET6, address, &in->sin6_addr);
  in->sin6_scope_id = scope;
  a.len = sizeof(sockaddr_in6);
  return a;
}

TEST(ForwardedDatagram, Ipv4RoundTrips) {
  Datagram d;
  d.remote = v4("192.0.2.7", 50123);
  d.local = v4("198.51.100.1", 443);
  d.ecn = 1;
  std::vector<uint8_t> m = message(d, {0xc0, 1, 2, 3});
  ASSERT_EQ(m.size(), kForwardedHeader + 4);
  EXPECT_EQ(m[0], 'Q');
  Datagram back;
  common::Status decoded = decodeForwardedDatagram(m, back);
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  EXPECT_EQ(back.remote.len, sizeof(sockaddr_in));
  EXPECT_EQ(std::memcmp(&back.remote.storage, &d.remote.storage, sizeof(sockaddr_in)), 0);
  EXPECT_EQ(std::memcmp(&back.local.storage, &d.local.storage, sizeof(sockaddr_in)), 0);
  EXPECT_EQ(back.ecn, 1);
  EXPECT_EQ(std::vector<uint8_t>(back.data, back.data + back.len),
            (std::vector<uint8_t>{0xc0, 1, 2, 3}));
  EXPECT_EQ(back.data, m.data() + kForwardedHeader);  // read in place, not copied
}

TEST(ForwardedDatagram, Ipv6RoundTripsWithScopeIds) {
  Datagram d;
  d.remote = v6("fe80::1", 1, 3);
  d.local = v6("2001:db8::2", 65535, 0);
  d.ecn = 3;
  std::vector<uint8_t> m = message(d, {7});
  Datagram back;
  common::Status decoded = decodeForwardedDatagram(m, back);
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  const auto* r = reinterpret_cast<const sockaddr_in6*>(&back.remote.storage);
  const auto* l = reinterpret_cast<const sockaddr_in6*>(&back.local.storage);
  const auto* sent = reinterpret_cast<const sockaddr_in6*>(&d.remote.storage);
  const auto* sent_local = reinterpret_cast<const sockaddr_in6*>(&d.local.storage);
  EXPECT_EQ(back.remote.len, sizeof(sockaddr_in6));
  EXPECT_EQ(ntohs(r->sin6_port), 1);
  EXPECT_EQ(r->sin6_scope_id, 3u);
  EXPECT_EQ(std::memcmp(&r->sin6_addr, &sent->sin6_addr, 16), 0);
  EXPECT_EQ(ntohs(l->sin6_port), 65535);
  EXPECT_EQ(std::memcmp(&l->sin6_addr, &sent_local->sin6_addr, 16), 0);
  EXPECT_EQ(back.ecn, 3);
}

TEST(ForwardedDatagram, WhatIsNotOneIsRefused) {
  Datagram d;
  uint8_t header[kForwardedHeader];
  EXPECT_FALSE(encodeForwardedHeader(d, header));  // no family
  d.remote = v4("127.0.0.1", 1);
  d.local = v6("::1", 2, 0);
  EXPECT_FALSE(encodeForwardedHeader(d, header));  // families differ
  d.local = v4("127.0.0.1", 2);
  std::vector<uint8_t> good = message(d, {1});
  Datagram back;
  EXPECT_TRUE(decodeForwardedDatagram(good, back).ok());
  auto refused = [&](size_t at, uint8_t value) {
    std::vector<uint8_t> bad = good;
    bad[at] = value;
    return !decodeForwardedDatagram(bad, back).ok();
  };
  EXPECT_TRUE(refused(0, 'C'));  // a hand-off's byte, or anything else
  EXPECT_TRUE(refused(1, 4));    // ECN is two bits
  EXPECT_TRUE(refused(2, 5));    // a family other than 4 and 6
  EXPECT_TRUE(refused(3, 1));
  // A header without a datagram, and a lone hand-off byte.
  EXPECT_FALSE(
      decodeForwardedDatagram(std::span<const uint8_t>(good.data(), kForwardedHeader), back).ok());
  EXPECT_FALSE(decodeForwardedDatagram(std::span<const uint8_t>(good.data(), 1), back).ok());
}

}  // namespace
}  // namespace scalws::ipc
