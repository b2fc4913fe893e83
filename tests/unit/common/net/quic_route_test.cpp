// The route a worker writes into its connection IDs on a shared address, which the front
// computes on its own: fixed bytes for fixed inputs (a front and a worker of different
// builds must agree), and distinct for every loop of an instance.
#include "common/net/quic_route.h"

#include <gtest/gtest.h>

#include <set>

namespace scalws::common::net {
namespace {

TEST(QuicRoute, IsTheInstanceHashThenSlotAndLoop) {
  // FNV-1a of "shop" is 0xa847e0a9 (the published 32-bit parameters).
  EXPECT_EQ(quicInstanceHash("shop"), 0xa847e0a9u);
  EXPECT_EQ(quicInstanceHash(""), 2166136261u);
  QuicRoute route = quicRouteOf("shop", 3, 5);
  EXPECT_EQ(route, (QuicRoute{0xa8, 0x47, 0xe0, 0xa9, 0x00, 0x30, 0x05}));
  EXPECT_EQ(quicRouteOf("shop", 0xfff, 0xfff),
            (QuicRoute{0xa8, 0x47, 0xe0, 0xa9, 0xff, 0xff, 0xff}));
}

TEST(QuicRoute, EveryLoopOfAnInstanceHasItsOwn) {
  std::set<QuicRoute> seen;
  for (uint32_t slot = 0; slot < 64; ++slot) {
    for (uint32_t loop = 0; loop < 64; ++loop) seen.insert(quicRouteOf("blog", slot, loop));
  }
  EXPECT_EQ(seen.size(), 64u * 64u);
  EXPECT_NE(quicRouteOf("blog", 0, 0), quicRouteOf("shop", 0, 0));
}

}  // namespace
}  // namespace scalws::common::net
