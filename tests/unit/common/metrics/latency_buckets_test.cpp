#include "common/metrics/latency_buckets.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::common::metrics {
namespace {

TEST(LatencyBucketsTest, BoundsGrowByHalfOctavesFromOneMicrosecondToAMinute) {
  EXPECT_EQ(latencyBucketUpperUs(0), 1u);
  EXPECT_EQ(latencyBucketUpperUs(2), 2u);
  EXPECT_EQ(latencyBucketUpperUs(20), 1024u);
  EXPECT_GT(latencyBucketUpperUs(kLatencyBuckets - 2), 60'000'000u);  // covers 60 s
  EXPECT_EQ(latencyBucketUpperUs(kLatencyBuckets - 1), UINT64_MAX);
  for (size_t i = 1; i < kLatencyBuckets; ++i) {
    EXPECT_GE(latencyBucketUpperUs(i), latencyBucketUpperUs(i - 1));
  }
}

TEST(LatencyBucketsTest, EveryValueLandsInTheFirstBucketThatHoldsIt) {
  const uint64_t values[] = {0, 1, 2, 3, 100, 1023, 1024, 1025, 5'000'000, UINT64_MAX};
  for (uint64_t us : values) {
    size_t b = latencyBucket(us);
    EXPECT_LE(us, latencyBucketUpperUs(b)) << us;
    if (b > 0) {
      EXPECT_GT(us, latencyBucketUpperUs(b - 1)) << us;
    }
  }
}

TEST(LatencyBucketsTest, PercentilesFromCounts) {
  std::vector<uint64_t> counts(kLatencyBuckets, 0);
  EXPECT_EQ(latencyPercentileUs(counts, 0.5), 0u);
  counts[latencyBucket(100)] = 90;     // 90 requests near 100 µs
  counts[latencyBucket(50'000)] = 10;  // 10 near 50 ms
  EXPECT_EQ(latencyPercentileUs(counts, 0.5), latencyBucketUpperUs(latencyBucket(100)));
  EXPECT_EQ(latencyPercentileUs(counts, 0.9), latencyBucketUpperUs(latencyBucket(100)));
  EXPECT_EQ(latencyPercentileUs(counts, 0.99), latencyBucketUpperUs(latencyBucket(50'000)));
}

}  // namespace
}  // namespace scalws::common::metrics
