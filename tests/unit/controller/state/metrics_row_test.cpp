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
  a.figures.requests_by_class[1] = 10;
  a.figures.requests_by_action[static_cast<size_t>(common::metrics::Action::kPhp)] = 4;
  a.figures.bytes_out = 1000;
  a.figures.conn_active = 7;
  a.figures.rss_bytes = 100;
  a.figures.latency[0] = 1;
  a.figures.latency[1] = 2;
  MetricsRow b = a;
  b.bucket_ms = 70'000;
  b.figures.conn_active = 3;
  b.figures.rss_bytes = 200;
  b.figures.latency = {};
  b.figures.latency[2] = 5;

  MetricsRow sum = a;
  mergeMetrics(sum, b);
  EXPECT_EQ(sum.figures.requests_by_class[1], 20u);
  EXPECT_EQ(sum.figures.requests_by_action[3], 8u);
  EXPECT_EQ(sum.figures.bytes_out, 2000u);
  EXPECT_EQ(sum.figures.conn_active, 3u);  // b is later
  EXPECT_EQ(sum.figures.rss_bytes, 200u);
  EXPECT_EQ(sum.figures.latency[0], 1u);
  EXPECT_EQ(sum.figures.latency[2], 5u);
  EXPECT_EQ(sum.bucket_ms, 60'000);  // the rollup keeps its own bucket

  // Merging an earlier row does not overwrite the gauges.
  MetricsRow other = b;
  mergeMetrics(other, a);
  EXPECT_EQ(other.figures.conn_active, 3u);
  EXPECT_EQ(other.figures.bytes_out, 2000u);
}

TEST(MetricsRowTest, ColumnsAreUniqueAndCoverEveryField) {
  std::set<std::string> names;
  common::metrics::MetricsSnapshot figures;
  for (const MetricsColumn& column : metricsColumns()) {
    EXPECT_TRUE(names.insert(column.name).second) << column.name;
    EXPECT_EQ(column.of(figures), 0u) << column.name;
    column.of(figures) = 1;
  }
  // Every integer figure was reached through exactly one column (the histogram is the blob).
  figures.latency.fill(1);
  const auto* words = reinterpret_cast<const uint64_t*>(&figures);
  for (size_t i = 0; i < sizeof(figures) / sizeof(uint64_t); ++i) EXPECT_EQ(words[i], 1u) << i;
  EXPECT_TRUE(names.count("req_4xx"));
  EXPECT_TRUE(names.count("act_php"));
  EXPECT_TRUE(names.count("php_wait_us"));
}

TEST(MetricsRowTest, TheSchemaIsWrittenFromTheColumns) {
  std::string sql = metricsTableSql("metrics_10s", 2);
  EXPECT_NE(sql.find("CREATE TABLE metrics_10s ("), std::string::npos);
  EXPECT_NE(sql.find("  act_other INTEGER NOT NULL,\n"), std::string::npos) << sql;
  EXPECT_NE(sql.find("latency BLOB NOT NULL"), std::string::npos);
  EXPECT_NE(sql.find("CREATE INDEX metrics_10s_by_bucket"), std::string::npos);
  // No figure of the list came after version 2 yet.
  EXPECT_EQ(metricsTableSql("metrics_1m", 2), metricsTableSql("metrics_1m", 99));
  EXPECT_EQ(metricsColumnsSince(3), "");
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
