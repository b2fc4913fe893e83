// MetricsRow: one instance's figures over one rollup bucket, as stored in metrics_10s
// (kept 24 h) and metrics_1m (kept 30 days).
//
// The figures are a MetricsSnapshot whose counters are increases over the bucket (the
// collector subtracts the workers' monotonic totals, so a restarted worker never makes
// them negative) and whose gauges (conn_active, rss_bytes) are taken at the end of the
// bucket. The DB columns are generated from the field list (common/metrics/metrics_fields.h):
// one integer column per figure and per label of a labelled figure, and the latency
// histogram as a sparse blob.
#pragma once

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

// More histogram buckets than any layout needs (1 µs..60 s log-scale is ~30-100); a blob
// may name buckets past the snapshot's layout, which then count in its last bucket.
inline constexpr size_t kMaxLatencyBuckets = 256;

struct MetricsRow {
  std::string instance;
  int64_t bucket_ms = 0;  // start of the bucket, a multiple of bucketMs(resolution)
  common::metrics::MetricsSnapshot figures;

  friend bool operator==(const MetricsRow&, const MetricsRow&) = default;
};

// Adds `from` into `into` (e.g. six 10 s rows into a 1 min row): counters and histogram
// buckets add up; gauges take the value of whichever row has the later bucket_ms.
void mergeMetrics(MetricsRow& into, const MetricsRow& from);

// Checks what the DB would refuse or corrupt: instance name, alignment of bucket_ms to the
// resolution, values that do not fit SQLite's signed 64-bit integers.
common::Status validateMetricsRow(const MetricsRow& row, MetricsResolution resolution);

// The histogram blob: (bucket index, count) pairs of LEB128 varints for non-zero buckets,
// indexes strictly increasing; an empty histogram is an empty blob.
std::string encodeHistogram(std::span<const uint64_t> counts);
// Sized to the last non-zero bucket + 1 (trailing zero buckets are not kept, so a row
// read back has them trimmed). Malformed blobs → kInvalidArgument.
common::Result<std::vector<uint64_t>> decodeHistogram(std::string_view blob);

// One integer column of the metrics tables: a scalar figure, or one label of a labelled
// figure. In schema order (labelled figures first, then the scalars, as metrics_fields.h
// lists them), after instance and bucket_ms and before the latency blob.
struct MetricsColumn {
  std::string name;
  bool gauge = false;
  int since = 0;  // the schema version whose migration made it
  uint64_t common::metrics::MetricsSnapshot::*member = nullptr;
  const common::metrics::LabelledField* labelled = nullptr;  // when member is null
  size_t label = 0;

  uint64_t& of(common::metrics::MetricsSnapshot& s) const;
  uint64_t of(const common::metrics::MetricsSnapshot& s) const;
};
std::span<const MetricsColumn> metricsColumns();

// "CREATE TABLE <table> (...)" with the columns of schema version `version` and before,
// and its index: what the migration that made the metrics tables writes for each table.
std::string metricsTableSql(std::string_view table, int version);
// "ALTER TABLE ... ADD COLUMN" for both tables, for the columns made by `version`: the
// migration of a figure appended to the field list later.
std::string metricsColumnsSince(int version);

}  // namespace scalws::controller::state
