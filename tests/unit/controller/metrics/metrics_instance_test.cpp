#include "controller/metrics/metrics_instance.h"

#include <gtest/gtest.h>

namespace scalws::controller {
namespace {

// A worker's totals: `ok` 2xx and `missing` 4xx answers, each 100 bytes out and in bucket
// 10; `active` open connections; RSS in MiB.
MetricsSnapshot worker(uint64_t ok, uint64_t missing, uint64_t active = 0, uint64_t rss_mib = 0) {
  MetricsSnapshot s;
  s.requests_by_class[1] = ok;
  s.requests_by_class[3] = missing;
  s.requests_by_action[1] = ok + missing;
  s.bytes_out = 100 * (ok + missing);
  s.conn_accepted = ok + missing;
  s.conn_closed = ok + missing - active;
  s.conn_active = active;
  s.rss_bytes = rss_mib << 20;
  s.cpu_us = 1000 * (ok + missing);
  s.latency[10] = ok + missing;
  return s;
}

TEST(InstanceMetrics, SumsLiveWorkersCountersAndGauges) {
  InstanceMetrics m(0, 0);
  m.onSnapshot(10, true, worker(5, 1, 2, 30), 1000);
  m.onSnapshot(11, true, worker(7, 0, 1, 20), 1000);
  MetricsSnapshot t = m.total();
  EXPECT_EQ(t.requests_by_class[1], 12u);
  EXPECT_EQ(t.requests_by_class[3], 1u);
  EXPECT_EQ(t.conn_active, 3u);
  EXPECT_EQ(t.rss_bytes, 50u << 20);
  EXPECT_EQ(t.latency[10], 13u);
  EXPECT_EQ(m.liveWorkers(), 2u);
  EXPECT_EQ(m.lastSnapshotMs(), 1000);
}

TEST(InstanceMetrics, ARestartedWorkerNeverMakesTotalsGoBackwards) {
  InstanceMetrics m(0, 0);
  m.onSnapshot(10, true, worker(40, 4, 3, 30), 1000);
  m.onSnapshot(11, true, worker(10, 0, 0, 20), 1000);
  ASSERT_EQ(m.total().requests(), 54u);
  // pid 10 is killed: its last figures stay counted, its connections are closed now.
  m.onExit(10);
  MetricsSnapshot after_exit = m.total();
  EXPECT_EQ(after_exit.requests(), 54u);
  EXPECT_EQ(after_exit.conn_active, 0u);
  EXPECT_EQ(after_exit.conn_closed, 44u + 10u);
  EXPECT_EQ(after_exit.rss_bytes, 20u << 20);
  EXPECT_EQ(m.liveWorkers(), 1u);
  // Its replacement counts from zero.
  m.onSnapshot(12, true, worker(2, 1, 1, 25), 2000);
  MetricsSnapshot t = m.total();
  EXPECT_EQ(t.requests_by_class[1], 52u);
  EXPECT_EQ(t.requests_by_class[3], 5u);
  EXPECT_EQ(t.latency[10], 57u);
  EXPECT_EQ(t.cpu_us, 57'000u);
  EXPECT_EQ(t.rss_bytes, 45u << 20);
  // An exit of a pid we never heard of changes nothing.
  m.onExit(99);
  EXPECT_EQ(m.total(), t);
}

TEST(InstanceMetrics, AReattachedWorkersHistoryIsABaselineNotNews) {
  InstanceMetrics m(0, 0);
  m.onSnapshot(10, /*fresh=*/false, worker(1000, 50, 4, 30), 1000);
  MetricsSnapshot t = m.total();
  EXPECT_EQ(t.requests(), 0u);
  EXPECT_EQ(t.conn_active, 4u);  // gauges are what they are
  EXPECT_EQ(t.rss_bytes, 30u << 20);
  m.onSnapshot(10, false, worker(1003, 51, 4, 30), 2000);
  EXPECT_EQ(m.total().requests_by_class[1], 3u);
  EXPECT_EQ(m.total().requests_by_class[3], 1u);
  m.onExit(10);
  EXPECT_EQ(m.total().requests(), 4u);
}

TEST(InstanceMetrics, CountersGoingBackAreANewProcess) {
  InstanceMetrics m(0, 0);
  m.onSnapshot(10, true, worker(30, 0), 1000);
  m.onSnapshot(10, true, worker(2, 0), 2000);
  EXPECT_EQ(m.total().requests(), 32u);
  m.onSnapshot(10, true, worker(5, 0), 3000);
  EXPECT_EQ(m.total().requests(), 35u);
}

TEST(InstanceMetrics, BucketsAreIncreasesBetweenBoundaries) {
  InstanceMetrics m(5'000, 0);
  m.onSnapshot(10, true, worker(3, 0), 6'000);
  MetricsSnapshot first = m.closeBucket(10'000);
  EXPECT_EQ(first.requests(), 3u);  // since creation (zero)
  m.onSnapshot(10, true, worker(10, 2, 1, 9), 15'000);
  MetricsSnapshot second = m.closeBucket(20'000);
  EXPECT_EQ(second.requests_by_class[1], 7u);
  EXPECT_EQ(second.requests_by_class[3], 2u);
  EXPECT_EQ(second.conn_active, 1u);
  EXPECT_EQ(second.rss_bytes, 9u << 20);
  EXPECT_EQ(m.closeBucket(30'000).requests(), 0u);
}

TEST(InstanceMetrics, RecentBaseIsTheNewestSampleOldEnough) {
  InstanceMetrics m(0, 0);
  for (int64_t t = 1000; t <= 20'000; t += 1000) {
    m.onSnapshot(10, true, worker(static_cast<uint64_t>(t / 1000), 0), t);
    m.sample(t);
  }
  const InstanceMetrics::Sample& base = m.recentBase(20'500, 10'000);
  EXPECT_EQ(base.time_ms, 10'000);
  EXPECT_EQ(base.total.requests(), 10u);
  // Nothing old enough: the oldest kept.
  InstanceMetrics young(0, 0);
  young.sample(500);
  EXPECT_EQ(young.recentBase(1000, 10'000).time_ms, 0);
  // Only kRecentSamples are kept.
  InstanceMetrics many(0, 0);
  for (int64_t t = 1000; t <= 100'000; t += 1000) many.sample(t);
  EXPECT_EQ(many.recentBase(100'000, 1'000'000).time_ms,
            100'000 - static_cast<int64_t>(InstanceMetrics::kRecentSamples - 1) * 1000);
}

TEST(InstanceMetrics, WindowBaseSaysWhetherMemoryReachesBack) {
  // Created at 13 s, in the bucket that started at 10 s: the boundary history starts there.
  InstanceMetrics m(13'000, 10'000);
  bool covered = true;
  EXPECT_EQ(m.windowBase(1'000, &covered).time_ms, 10'000);  // before creation
  EXPECT_FALSE(covered);
  EXPECT_EQ(m.windowBase(12'000, &covered).time_ms, 10'000);
  EXPECT_TRUE(covered);
  for (int64_t b = 20'000; b <= 600'000; b += 10'000) m.closeBucket(b);
  EXPECT_EQ(m.windowBase(600'000 - 300'000 + 5'000, &covered).time_ms, 300'000);
  EXPECT_TRUE(covered);
  // Older than what is kept: the oldest boundary, not covered.
  int64_t oldest = 600'000 - static_cast<int64_t>(InstanceMetrics::kBoundarySamples - 1) * 10'000;
  EXPECT_EQ(m.windowBase(10'000, &covered).time_ms, oldest);
  EXPECT_FALSE(covered);
  // Five minutes back always fits.
  EXPECT_LE(oldest, 600'000 - 310'000);
}

}  // namespace
}  // namespace scalws::controller
