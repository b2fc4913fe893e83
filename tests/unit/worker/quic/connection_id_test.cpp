#include "worker/quic/connection_id.h"

#include <gtest/gtest.h>

#include <unordered_set>

namespace scalws::worker::quic {
namespace {

TEST(ConnectionId, CarriesTheSteeringIdBigEndianThenRandomBytes) {
  ngtcp2_cid a;
  ngtcp2_cid b;
  ASSERT_TRUE(makeConnectionId(0x0102, a));
  ASSERT_TRUE(makeConnectionId(0x0102, b));
  EXPECT_EQ(a.datalen, kCidLength);
  EXPECT_EQ(a.data[0], 0x01);
  EXPECT_EQ(a.data[1], 0x02);
  EXPECT_EQ(steeringIdOf(a.data, a.datalen), 0x0102);
  EXPECT_NE(CidKey(a), CidKey(b));  // 14 random bytes each
}

TEST(ConnectionId, TooShortToSteer) {
  const uint8_t one[] = {7};
  EXPECT_EQ(steeringIdOf(one, 1), kNoSteering);
  EXPECT_EQ(steeringIdOf(one, 0), kNoSteering);
}

TEST(ConnectionId, KeysCompareByLengthAndBytes) {
  const uint8_t bytes[] = {1, 2, 3, 4};
  EXPECT_EQ(CidKey(bytes, 4), CidKey(bytes, 4));
  EXPECT_NE(CidKey(bytes, 4), CidKey(bytes, 3));
  std::unordered_set<CidKey, CidKeyHash> set;
  for (int i = 0; i < 1000; ++i) {
    ngtcp2_cid cid;
    ASSERT_TRUE(makeConnectionId(3, cid));
    set.insert(CidKey(cid));
  }
  EXPECT_EQ(set.size(), 1000u);
}

}  // namespace
}  // namespace scalws::worker::quic
