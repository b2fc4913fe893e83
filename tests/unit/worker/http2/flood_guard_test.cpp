#include "worker/http2/flood_guard.h"

#include <gtest/gtest.h>

namespace scalws::worker::http2 {
namespace {

TEST(TokenBucket, ABurstThenTheRate) {
  TokenBucket bucket(5, 10);  // 5 at once, then one per 100 ms
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(bucket.take(1000));
  EXPECT_FALSE(bucket.take(1000));
  EXPECT_FALSE(bucket.take(1099));
  EXPECT_TRUE(bucket.take(1100));
  EXPECT_FALSE(bucket.take(1100));
  // A long pause refills up to the burst, no more.
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(bucket.take(100'000));
  EXPECT_FALSE(bucket.take(100'000));
}

TEST(TokenBucket, ClockGoingBackDoesNotRefill) {
  TokenBucket bucket(1, 1000);
  EXPECT_TRUE(bucket.take(5000));
  EXPECT_FALSE(bucket.take(4000));
}

TEST(FloodGuard, EachKindHasItsOwnBudget) {
  FloodLimits limits;
  limits.reset_burst = 2;
  limits.control_burst = 1;
  limits.empty_burst = 3;
  FloodGuard guard(limits);
  EXPECT_TRUE(guard.onReset(0));
  EXPECT_TRUE(guard.onReset(0));
  EXPECT_FALSE(guard.onReset(0));
  EXPECT_TRUE(guard.onControl(0));
  EXPECT_FALSE(guard.onControl(0));
  EXPECT_TRUE(guard.onEmptyFrame(0));
}

}  // namespace
}  // namespace scalws::worker::http2
