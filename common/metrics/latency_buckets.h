// The request latency histogram's fixed log-scale layout, shared by the workers
// that count and the controller that stores and reads percentiles: two buckets per octave
// from 1 µs; the last bucket holds everything above ~67 s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace scalws::common::metrics {

inline constexpr size_t kLatencyBuckets = 54;

// The bucket a latency falls in: the first whose upper bound is >= `us`.
size_t latencyBucket(uint64_t us);
// Upper bound of bucket `i` in µs (inclusive); UINT64_MAX for the last one.
uint64_t latencyBucketUpperUs(size_t i);
// The latency below which a fraction `q` (0..1) of the counted requests fall, reported as
// the upper bound of the bucket it lands in; 0 when nothing was counted.
uint64_t latencyPercentileUs(std::span<const uint64_t> counts, double q);

}  // namespace scalws::common::metrics
