#include "common/metrics/latency_buckets.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace scalws::common::metrics {
namespace {

// Bucket i ends at round(2^(i/2)) µs: 1, 1, 2, 3, 4, 6, 8, 11, 16, ... 67'108'864 µs.
std::array<uint64_t, kLatencyBuckets> makeBounds() {
  std::array<uint64_t, kLatencyBuckets> b{};
  for (size_t i = 0; i + 1 < kLatencyBuckets; ++i) {
    b[i] = static_cast<uint64_t>(std::llround(std::pow(2.0, static_cast<double>(i) / 2.0)));
  }
  b[kLatencyBuckets - 1] = UINT64_MAX;
  return b;
}

const std::array<uint64_t, kLatencyBuckets>& bounds() {
  static const std::array<uint64_t, kLatencyBuckets> kBounds = makeBounds();
  return kBounds;
}

}  // namespace

size_t latencyBucket(uint64_t us) {
  const auto& b = bounds();
  return static_cast<size_t>(std::lower_bound(b.begin(), b.end(), us) - b.begin());
}

uint64_t latencyBucketUpperUs(size_t i) {
  return i < kLatencyBuckets ? bounds()[i] : UINT64_MAX;
}

uint64_t latencyPercentileUs(std::span<const uint64_t> counts, double q) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * total)));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) return latencyBucketUpperUs(i);
  }
  return latencyBucketUpperUs(counts.size() - 1);
}

}  // namespace scalws::common::metrics
