#include "controller/token_bucket.h"

#include <gtest/gtest.h>

namespace scalws::controller {
namespace {

TEST(TokenBucket, ABurstThenTheRate) {
  TokenBucket bucket(10, 3);  // 3 at once, then one per 100 ms
  EXPECT_TRUE(bucket.take(1000));
  EXPECT_TRUE(bucket.take(1000));
  EXPECT_TRUE(bucket.take(1000));
  EXPECT_FALSE(bucket.take(1000));
  EXPECT_FALSE(bucket.take(1050));
  EXPECT_TRUE(bucket.take(1100));
  EXPECT_FALSE(bucket.take(1100));
  // A long pause refills up to the burst, not beyond.
  EXPECT_TRUE(bucket.take(60'000));
  EXPECT_TRUE(bucket.take(60'000));
  EXPECT_TRUE(bucket.take(60'000));
  EXPECT_FALSE(bucket.take(60'000));
}

TEST(TokenBucket, AClockGoingBackDoesNotRefill) {
  TokenBucket bucket(10, 1);
  EXPECT_TRUE(bucket.take(5000));
  EXPECT_FALSE(bucket.take(10));
  EXPECT_FALSE(bucket.take(5000));
}

}  // namespace
}  // namespace scalws::controller
