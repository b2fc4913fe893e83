// MetricsRow: one instance's figures over one rollup bucket, as stored in
// metrics_10s (kept 24 h) and metrics_1m (kept 30 days).
//
// Counters are increases over the bucket (the collector subtracts the workers' monotonic
// totals, so a restarted worker never makes them negative); conn_active and rss_bytes are
// gauges taken at the end of the bucket. The latency histogram's bucket layout (fixed
// log-scale bounds) belongs to the worker's counters; here it is a vector of counts by
// bucket index, stored as a sparse blob.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/metrics/metrics_snapshot.h"
#include "common/status.h"

namespace scalws::controller::state {

enum class MetricsResolution { k10s, k1m };
int64_t bucketMs(MetricsResolution resolution);               // 10'000 or 60'000
std::string_view metricsTable(MetricsResolution resolution);  // "metrics_10s" | "metrics_1m"

// More histogram buckets than any layout needs (1 µs..60 s log-scale is ~30-100).
inline constexpr size_t kMaxLatencyBuckets = 256;

struct MetricsRow {
  std::string instance;
  int64_t bucket_ms = 0;  // start of the bucket, a multiple of bucketMs(resolution)

  std::array<uint64_t, 5> requests_by_class{};  // [0] 1xx ... [4] 5xx
  // Indexed by common::metrics::Action, the order the workers send.
  std::array<uint64_t, common::metrics::kActionCount> requests_by_action{};
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t conn_accepted = 0;
  uint64_t conn_closed = 0;
  uint64_t conn_active = 0;  // gauge
  uint64_t tls_handshakes = 0;
  uint64_t file_cache_hits = 0;  // open-file cache
  uint64_t file_cache_misses = 0;
  uint64_t upstream_connects = 0;
  uint64_t upstream_reuses = 0;
  uint64_t upstream_errors = 0;
  uint64_t php_connects = 0;
  uint64_t php_reuses = 0;
  uint64_t php_errors = 0;
  uint64_t php_waits = 0;    // requests that queued for a pool connection
  uint64_t php_wait_us = 0;  // total time they queued
  uint64_t cpu_us = 0;       // utime + stime of the instance's processes over the bucket
  uint64_t rss_bytes = 0;    // gauge: summed over the instance's processes
  uint64_t latency_sum_us = 0;
  uint64_t http3_requests = 0;  // of the requests, those over HTTP/3
  uint64_t quic_handshakes = 0;
  uint64_t quic_retries = 0;  // Retry packets sent
  uint64_t quic_migrations = 0;
  uint64_t quic_lost_packets = 0;
  std::vector<uint64_t> latency_buckets;  // count per histogram bucket index

  friend bool operator==(const MetricsRow&, const MetricsRow&) = default;
};

// Adds `from` into `into` (e.g. six 10 s rows into a 1 min row): counters and histogram
// buckets add up; gauges take the value of whichever row has the later bucket_ms.
void mergeMetrics(MetricsRow& into, const MetricsRow& from);

// Checks what the DB would refuse or corrupt: instance name, alignment of bucket_ms to the
// resolution, histogram size, values that do not fit SQLite's signed 64-bit integers.
common::Status validateMetricsRow(const MetricsRow& row, MetricsResolution resolution);

// The histogram blob: (bucket index, count) pairs of LEB128 varints for non-zero buckets,
// indexes strictly increasing; an empty histogram is an empty blob.
std::string encodeHistogram(std::span<const uint64_t> counts);
// Sized to the last non-zero bucket + 1 (trailing zero buckets are not kept, so a row
// read back has them trimmed). Malformed blobs → kInvalidArgument.
common::Result<std::vector<uint64_t>> decodeHistogram(std::string_view blob);

// The integer columns of the metrics tables, in schema order (after instance and
// bucket_ms, before the latency blob): the single place the store maps columns to fields.
struct MetricsColumn {
  std::string_view name;
  bool gauge;
  uint64_t& (*field)(MetricsRow& row);
};
std::span<const MetricsColumn> metricsColumns();

}  // namespace scalws::controller::state
