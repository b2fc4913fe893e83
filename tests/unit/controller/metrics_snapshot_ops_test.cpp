#include "controller/metrics_snapshot_ops.h"

#include <gtest/gtest.h>

namespace scalws::controller {
namespace {

using common::metrics::kLatencyBuckets;

// Every field distinct, scaled by k.
MetricsSnapshot filled(uint64_t k) {
  MetricsSnapshot s;
  uint64_t v = k;
  for (auto& c : s.requests_by_class) c = v++;
  for (auto& c : s.requests_by_action) c = v++;
  for (uint64_t* f : {&s.bytes_in,
                      &s.bytes_out,
                      &s.conn_accepted,
                      &s.conn_closed,
                      &s.conn_active,
                      &s.tls_handshakes,
                      &s.file_cache_hits,
                      &s.file_cache_misses,
                      &s.upstream_connects,
                      &s.upstream_reuses,
                      &s.upstream_errors,
                      &s.php_connects,
                      &s.php_reuses,
                      &s.php_errors,
                      &s.php_waits,
                      &s.php_wait_us,
                      &s.cpu_us,
                      &s.rss_bytes,
                      &s.latency_sum_us,
                      &s.http3_requests,
                      &s.quic_handshakes,
                      &s.quic_retries,
                      &s.quic_migrations,
                      &s.quic_lost_packets}) {
    *f = v++ * k;
  }
  for (size_t i = 0; i < kLatencyBuckets; ++i) s.latency[i] = i * k;
  return s;
}

TEST(MetricsSnapshotOps, IncreaseSubtractsCountersAndKeepsTheNewerGauges) {
  MetricsSnapshot before = filled(1);
  MetricsSnapshot now = filled(3);
  MetricsSnapshot d = metricsIncrease(now, before);
  EXPECT_EQ(d.requests_by_class[1], now.requests_by_class[1] - before.requests_by_class[1]);
  EXPECT_EQ(d.requests_by_action[6], now.requests_by_action[6] - before.requests_by_action[6]);
  EXPECT_EQ(d.bytes_out, now.bytes_out - before.bytes_out);
  EXPECT_EQ(d.cpu_us, now.cpu_us - before.cpu_us);
  EXPECT_EQ(d.quic_lost_packets, now.quic_lost_packets - before.quic_lost_packets);
  EXPECT_EQ(d.latency[10], 20u);
  EXPECT_EQ(d.conn_active, now.conn_active);  // gauges: as they are now
  EXPECT_EQ(d.rss_bytes, now.rss_bytes);
}

TEST(MetricsSnapshotOps, IncreaseNeverGoesNegative) {
  MetricsSnapshot d = metricsIncrease(filled(1), filled(2));
  EXPECT_EQ(d.requests(), 0u);
  EXPECT_EQ(d.bytes_in, 0u);
  EXPECT_EQ(d.latency[5], 0u);
  EXPECT_EQ(d.conn_active, filled(1).conn_active);
}

TEST(MetricsSnapshotOps, FoldEndedKeepsCountersClosesConnectionsDropsGauges) {
  MetricsSnapshot base;
  MetricsSnapshot last = filled(1);
  foldEnded(base, last);
  EXPECT_EQ(base.requests(), last.requests());
  EXPECT_EQ(base.bytes_in, last.bytes_in);
  EXPECT_EQ(base.cpu_us, last.cpu_us);
  EXPECT_EQ(base.conn_closed, last.conn_closed + last.conn_active);
  EXPECT_EQ(base.conn_active, 0u);
  EXPECT_EQ(base.rss_bytes, 0u);
  EXPECT_EQ(base.latency, last.latency);
}

TEST(MetricsSnapshotOps, CountersWentBackSeesAnyCounterButNotGauges) {
  MetricsSnapshot a = filled(2);
  MetricsSnapshot b = a;
  EXPECT_FALSE(countersWentBack(b, a));
  b.rss_bytes = 0;
  b.conn_active = 0;
  EXPECT_FALSE(countersWentBack(b, a));
  b = a;
  b.latency[7] -= 1;
  EXPECT_TRUE(countersWentBack(b, a));
  b = a;
  b.php_wait_us -= 1;
  EXPECT_TRUE(countersWentBack(b, a));
}

TEST(MetricsSnapshotOps, RowRoundTripTrimsTheHistogram) {
  MetricsSnapshot s = filled(5);
  s.latency.fill(0);
  s.latency[3] = 9;
  state::MetricsRow row = toMetricsRow("web", 20'000, s);
  EXPECT_EQ(row.instance, "web");
  EXPECT_EQ(row.bucket_ms, 20'000);
  EXPECT_EQ(row.latency_buckets, (std::vector<uint64_t>{0, 0, 0, 9}));
  EXPECT_EQ(row.php_waits, s.php_waits);
  EXPECT_EQ(row.requests_by_action, s.requests_by_action);
  EXPECT_EQ(fromMetricsRow(row), s);
  EXPECT_TRUE(state::validateMetricsRow(row, state::MetricsResolution::k10s).ok());
}

TEST(MetricsSnapshotOps, RowWithMoreBucketsFoldsTheExtraIntoTheLast) {
  state::MetricsRow row;
  row.latency_buckets.assign(kLatencyBuckets + 3, 1);
  MetricsSnapshot s = fromMetricsRow(row);
  EXPECT_EQ(s.latency[kLatencyBuckets - 1], 4u);
  EXPECT_EQ(s.latency[0], 1u);
}

}  // namespace
}  // namespace scalws::controller
