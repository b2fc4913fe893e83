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

std::vector<uint8_t> message(const ForwardedDatagram& d, std::vector<uint8_t> payload) {
  std::vector<uint8_t> out(kForwardedHeader);
  EXPECT_TRUE(encodeForwardedHeader(d, out.data()));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

TEST(ForwardedDatagram, Ipv4RoundTrips) {
  ForwardedDatagram d;
  auto* remote = reinterpret_cast<sockaddr_in*>(&d.remote);
  remote->sin_family = AF_INET;
  remote->sin_port = htons(50123);
  inet_pton(AF_INET, "192.0.2.7", &remote->sin_addr);
  d.remote_len = sizeof(sockaddr_in);
  auto* local = reinterpret_cast<sockaddr_in*>(&d.local);
  local->sin_family = AF_INET;
  local->sin_port = htons(443);
  inet_pton(AF_INET, "198.51.100.1", &local->sin_addr);
  d.local_len = sizeof(sockaddr_in);
  d.ecn = 1;
  std::vector<uint8_t> m = message(d, {0xc0, 1, 2, 3});
  ASSERT_EQ(m.size(), kForwardedHeader + 4);
  EXPECT_EQ(m[0], 'Q');
  auto back = decodeForwardedDatagram(m);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->remote_len, sizeof(sockaddr_in));
  EXPECT_EQ(std::memcmp(&back->remote, &d.remote, sizeof(sockaddr_in)), 0);
  EXPECT_EQ(std::memcmp(&back->local, &d.local, sizeof(sockaddr_in)), 0);
  EXPECT_EQ(back->ecn, 1);
  EXPECT_EQ(std::vector<uint8_t>(back->payload.begin(), back->payload.end()),
            (std::vector<uint8_t>{0xc0, 1, 2, 3}));
}

TEST(ForwardedDatagram, Ipv6RoundTripsWithScopeIds) {
  ForwardedDatagram d;
  auto* remote = reinterpret_cast<sockaddr_in6*>(&d.remote);
  remote->sin6_family = AF_INET6;
  remote->sin6_port = htons(1);
  inet_pton(AF_INET6, "fe80::1", &remote->sin6_addr);
  remote->sin6_scope_id = 3;
  d.remote_len = sizeof(sockaddr_in6);
  auto* local = reinterpret_cast<sockaddr_in6*>(&d.local);
  local->sin6_family = AF_INET6;
  local->sin6_port = htons(65535);
  inet_pton(AF_INET6, "2001:db8::2", &local->sin6_addr);
  d.local_len = sizeof(sockaddr_in6);
  d.ecn = 3;
  auto back = decodeForwardedDatagram(message(d, {7}));
  ASSERT_TRUE(back.ok()) << back.status().message();
  const auto* r = reinterpret_cast<const sockaddr_in6*>(&back->remote);
  const auto* l = reinterpret_cast<const sockaddr_in6*>(&back->local);
  EXPECT_EQ(back->remote_len, sizeof(sockaddr_in6));
  EXPECT_EQ(ntohs(r->sin6_port), 1);
  EXPECT_EQ(r->sin6_scope_id, 3u);
  EXPECT_EQ(std::memcmp(&r->sin6_addr, &remote->sin6_addr, 16), 0);
  EXPECT_EQ(ntohs(l->sin6_port), 65535);
  EXPECT_EQ(std::memcmp(&l->sin6_addr, &local->sin6_addr, 16), 0);
  EXPECT_EQ(back->ecn, 3);
}

TEST(ForwardedDatagram, WhatIsNotOneIsRefused) {
  ForwardedDatagram d;
  uint8_t header[kForwardedHeader];
  EXPECT_FALSE(encodeForwardedHeader(d, header));  // no family
  d.remote.ss_family = AF_INET;
  d.remote_len = sizeof(sockaddr_in);
  d.local.ss_family = AF_INET6;
  d.local_len = sizeof(sockaddr_in6);
  EXPECT_FALSE(encodeForwardedHeader(d, header));  // families differ
  d.local.ss_family = AF_INET;
  d.local_len = sizeof(sockaddr_in);
  std::vector<uint8_t> good = message(d, {1});
  EXPECT_TRUE(decodeForwardedDatagram(good).ok());
  auto refused = [&](size_t at, uint8_t value) {
    std::vector<uint8_t> bad = good;
    bad[at] = value;
    return !decodeForwardedDatagram(bad).ok();
  };
  EXPECT_TRUE(refused(0, 'C'));  // a hand-off's byte, or anything else
  EXPECT_TRUE(refused(1, 4));    // ECN is two bits
  EXPECT_TRUE(refused(2, 5));    // a family other than 4 and 6
  EXPECT_TRUE(refused(3, 1));
  // A header without a datagram, and a lone hand-off byte.
  EXPECT_FALSE(
      decodeForwardedDatagram(std::span<const uint8_t>(good.data(), kForwardedHeader)).ok());
  EXPECT_FALSE(decodeForwardedDatagram(std::span<const uint8_t>(good.data(), 1)).ok());
}

}  // namespace
}  // namespace scalws::ipc
