#include "controller/state/metrics_row.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace scalws::controller::state {
namespace {

using common::Result;
using common::StatusCode;

TEST(MetricsRowTest, HistogramRoundTrips) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 100; ++round) {
    std::vector<uint64_t> counts(rng() % 80);
    for (uint64_t& c : counts) c = (rng() % 3 == 0) ? 0 : (rng() >> (rng() % 64));
    while (!counts.empty() && counts.back() == 0) counts.pop_back();
    Result<std::vector<uint64_t>> back = decodeHistogram(encodeHistogram(counts));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, counts);
  }
}

TEST(MetricsRowTest, HistogramIsSparse) {
  std::vector<uint64_t> counts(60, 0);
  counts[12] = 5;
  counts[40] = 300;
  // (12, 5) = 2 bytes, (40, 300) = 1 + 2 bytes.
  EXPECT_EQ(encodeHistogram(counts), std::string("\x0c\x05\x28\xac\x02", 5));
  EXPECT_EQ(encodeHistogram(std::vector<uint64_t>(10, 0)), "");
  Result<std::vector<uint64_t>> empty = decodeHistogram("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  // Trailing zero buckets are not kept.
  Result<std::vector<uint64_t>> trimmed = decodeHistogram(encodeHistogram({{1, 0, 0}}));
  ASSERT_TRUE(trimmed.ok());
  EXPECT_EQ(*trimmed, std::vector<uint64_t>{1});
}

TEST(MetricsRowTest, MalformedHistogramsAreRefused) {
  const std::string cases[] = {
      std::string("\x05", 1),                                           // index without count
      std::string("\x05\x80", 2),                                       // truncated varint
      std::string("\x05\x01\x05\x01", 4),                               // repeated index
      std::string("\x06\x01\x05\x01", 4),                               // decreasing index
      std::string("\x80\x02\x01", 3),                                   // index 256: out of range
      std::string("\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11),  // count > 64 bits
      std::string("\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00", 12),  // overlong
  };
  for (const std::string& blob : cases) {
    Result<std::vector<uint64_t>> r = decodeHistogram(blob);
    EXPECT_FALSE(r.ok()) << "accepted a blob of " << blob.size() << " bytes";
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    }
  }
  // The largest count fits.
  Result<std::vector<uint64_t>> max =
      decodeHistogram(encodeHistogram(std::vector<uint64_t>{UINT64_MAX}));
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, std::vector<uint64_t>{UINT64_MAX});
}

TEST(MetricsRowTest, MergeAddsCountersAndKeepsTheLatestGauges) {
  MetricsRow a;
  a.instance = "web";
  a.bucket_ms = 60'000;
  a.requests_by_class[1] = 10;
  a.requests_by_action[static_cast<size_t>(common::metrics::Action::kPhp)] = 4;
  a.bytes_out = 1000;
  a.conn_active = 7;
  a.rss_bytes = 100;
  a.latency_buckets = {1, 2};
  MetricsRow b = a;
  b.bucket_ms = 70'000;
  b.conn_active = 3;
  b.rss_bytes = 200;
  b.latency_buckets = {0, 0, 5};

  MetricsRow sum = a;
  mergeMetrics(sum, b);
  EXPECT_EQ(sum.requests_by_class[1], 20u);
  EXPECT_EQ(sum.requests_by_action[3], 8u);
  EXPECT_EQ(sum.bytes_out, 2000u);
  EXPECT_EQ(sum.conn_active, 3u);  // b is later
  EXPECT_EQ(sum.rss_bytes, 200u);
  EXPECT_EQ(sum.latency_buckets, (std::vector<uint64_t>{1, 2, 5}));
  EXPECT_EQ(sum.bucket_ms, 60'000);  // the rollup keeps its own bucket

  // Merging an earlier row does not overwrite the gauges.
  MetricsRow other = b;
  mergeMetrics(other, a);
  EXPECT_EQ(other.conn_active, 3u);
  EXPECT_EQ(other.bytes_out, 2000u);
}

TEST(MetricsRowTest, ColumnsAreUniqueAndCoverEveryField) {
  std::set<std::string_view> names;
  MetricsRow row;
  for (const MetricsColumn& column : metricsColumns()) {
    EXPECT_TRUE(names.insert(column.name).second) << column.name;
    EXPECT_EQ(column.field(row), 0u) << column.name;
    column.field(row) = 1;
  }
  // Every integer field was reached through exactly one column: 5 classes + 7 actions + 24.
  MetricsRow expected;
  expected.requests_by_class.fill(1);
  expected.requests_by_action.fill(1);
  for (uint64_t* f : {&expected.bytes_in,
                      &expected.bytes_out,
                      &expected.conn_accepted,
                      &expected.conn_closed,
                      &expected.conn_active,
                      &expected.tls_handshakes,
                      &expected.file_cache_hits,
                      &expected.file_cache_misses,
                      &expected.upstream_connects,
                      &expected.upstream_reuses,
                      &expected.upstream_errors,
                      &expected.php_connects,
                      &expected.php_reuses,
                      &expected.php_errors,
                      &expected.php_waits,
                      &expected.php_wait_us,
                      &expected.cpu_us,
                      &expected.rss_bytes,
                      &expected.latency_sum_us,
                      &expected.http3_requests,
                      &expected.quic_handshakes,
                      &expected.quic_retries,
                      &expected.quic_migrations,
                      &expected.quic_lost_packets}) {
    *f = 1;
  }
  EXPECT_EQ(row, expected);
  EXPECT_EQ(metricsColumns().size(), 5u + common::metrics::kActionCount + 24u);
}

TEST(MetricsRowTest, ValidationChecksAlignmentAndName) {
  MetricsRow row;
  row.instance = "web";
  row.bucket_ms = 30'000;
  EXPECT_TRUE(validateMetricsRow(row, MetricsResolution::k10s).ok());
  EXPECT_FALSE(validateMetricsRow(row, MetricsResolution::k1m).ok());
  row.bucket_ms = -10'000;
  EXPECT_FALSE(validateMetricsRow(row, MetricsResolution::k10s).ok());
  row.bucket_ms = 0;
  row.instance = "bad name";
  EXPECT_FALSE(validateMetricsRow(row, MetricsResolution::k10s).ok());
}

}  // namespace
}  // namespace scalws::controller::state
