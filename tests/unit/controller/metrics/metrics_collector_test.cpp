// The collector with a real StateStore on a temp dir and a fake clock: rollups, the
// minute merge, pruning, and windows read from memory and from the DB.
#include "controller/metrics/metrics_collector.h"

#include <gtest/gtest.h>

#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller {
namespace {

using state::MetricsResolution;
using state::MetricsRow;

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;

// `ok` 2xx answers, latency bucket 12 (~64 µs), 50 bytes each; gauges as given.
MetricsSnapshot totals(uint64_t ok, uint64_t errors = 0, uint64_t active = 0, uint64_t rss = 0) {
  MetricsSnapshot s;
  s.requests_by_class[1] = ok;
  s.requests_by_class[4] = errors;
  s.requests_by_action[0] = ok + errors;
  s.bytes_out = 50 * (ok + errors);
  s.latency[12] = ok + errors;
  s.conn_active = active;
  s.rss_bytes = rss;
  return s;
}

class MetricsCollectorTest : public state::StoreTest {
 protected:
  // The first whole minute after the fixture's start, plus half a second.
  static constexpr int64_t kMinuteStart = (kStartMs / kMinute + 1) * kMinute;

  MetricsCollectorTest() : store_(open()) {
    EXPECT_TRUE(store_.addInstance(instance("web")).ok());
    EXPECT_TRUE(store_.addInstance(instance("idle")).ok());
    clock_.set(kMinuteStart + 500);
  }

  MetricsCollector collector(state::Retention retention = {}) {
    MetricsCollector::Options o;
    o.clock = clock_.fn();
    o.retention = retention;
    return MetricsCollector(store_, o);
  }

  // One second of a worker sending `total` then the controller's tick.
  void second(MetricsCollector& c, int64_t pid, const MetricsSnapshot& total) {
    clock_.advance(kSecond);
    c.workerSnapshot("web", pid, true, total);
    c.tick();
  }

  std::vector<MetricsRow> rows(MetricsResolution r, int64_t from = 0, int64_t to = INT64_MAX) {
    common::Result<std::vector<MetricsRow>> list = store_.listMetrics("web", r, from, to);
    EXPECT_TRUE(list.ok()) << list.status().message();
    return list.ok() ? *list : std::vector<MetricsRow>();
  }

  static uint64_t requests(const MetricsRow& r) {
    uint64_t n = 0;
    for (uint64_t c : r.figures.requests_by_class) n += c;
    return n;
  }

  state::StateStore store_;
};

TEST_F(MetricsCollectorTest, TenSecondRowsHoldTheIncreaseAndTheLastGauges) {
  MetricsCollector c = collector();
  for (uint64_t k = 1; k <= 25; ++k) second(c, 10, totals(k * 3, k / 5, k % 4, k << 20));
  std::vector<MetricsRow> tens = rows(MetricsResolution::k10s);
  ASSERT_EQ(tens.size(), 2u);
  EXPECT_EQ(tens[0].bucket_ms, kMinuteStart);
  EXPECT_EQ(tens[1].bucket_ms, kMinuteStart + 10 * kSecond);
  // Closed at k = 10 and k = 20.
  EXPECT_EQ(tens[0].figures.requests_by_class[1], 30u);
  EXPECT_EQ(tens[0].figures.requests_by_class[4], 2u);
  EXPECT_EQ(tens[1].figures.requests_by_class[1], 30u);
  EXPECT_EQ(tens[1].figures.requests_by_class[4], 2u);
  EXPECT_EQ(tens[1].figures.bytes_out, 50u * 32);
  EXPECT_EQ(tens[1].figures.latency[12], 32u);
  EXPECT_EQ(tens[1].figures.latency[13], 0u);
  EXPECT_EQ(tens[1].figures.conn_active, 0u);  // 20 % 4, at the end of the bucket
  EXPECT_EQ(tens[1].figures.rss_bytes, 20u << 20);
  // The idle instance sent nothing and wrote nothing.
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_10s WHERE instance = 'idle'"), 0);
}

TEST_F(MetricsCollectorTest, MinuteRowsMergeTheSixTenSecondRows) {
  MetricsCollector c = collector();
  for (uint64_t k = 1; k <= 61; ++k) second(c, 10, totals(k * k, 0, 1, k));
  std::vector<MetricsRow> tens = rows(MetricsResolution::k10s);
  ASSERT_EQ(tens.size(), 6u);
  std::vector<MetricsRow> minutes = rows(MetricsResolution::k1m);
  ASSERT_EQ(minutes.size(), 1u);
  EXPECT_EQ(minutes[0].bucket_ms, kMinuteStart);
  EXPECT_EQ(minutes[0].figures.requests_by_class[1], 60u * 60u);
  MetricsRow merged;
  merged.instance = "web";
  merged.bucket_ms = kMinuteStart;
  for (const MetricsRow& r : tens) state::mergeMetrics(merged, r);
  EXPECT_EQ(minutes[0], merged);
  EXPECT_EQ(minutes[0].figures.rss_bytes, 60u);  // the last 10 s row's gauge
}

TEST_F(MetricsCollectorTest, AKilledWorkerLeavesEveryRowAndTheTotalGrowing) {
  MetricsCollector c = collector();
  for (uint64_t k = 1; k <= 14; ++k) second(c, 10, totals(k * 10));
  c.workerExited("web", 10);  // killed at 140 requests
  for (uint64_t k = 1; k <= 16; ++k) second(c, 11, totals(k));
  EXPECT_EQ(c.totals().at(0).second.requests(), 156u);
  std::vector<MetricsRow> tens = rows(MetricsResolution::k10s);
  ASSERT_EQ(tens.size(), 3u);
  EXPECT_EQ(requests(tens[0]), 100u);
  EXPECT_EQ(requests(tens[1]), 40u + 6u);
  EXPECT_EQ(requests(tens[2]), 10u);
}

TEST_F(MetricsCollectorTest, AMinuteSpanningAControllerRestartKeepsBothHalves) {
  {
    MetricsCollector first = collector();
    for (uint64_t k = 1; k <= 31; ++k) second(first, 10, totals(k));
  }
  // The new controller re-attaches the same worker: its 31 requests are history.
  MetricsCollector second_run = collector();
  clock_.advance(kSecond);
  second_run.workerSnapshot("web", 10, /*fresh=*/false, totals(31));
  second_run.tick();
  for (uint64_t k = 33; k <= 61; ++k) second(second_run, 10, totals(31 + 2 * (k - 32)));
  std::vector<MetricsRow> minutes = rows(MetricsResolution::k1m);
  ASSERT_EQ(minutes.size(), 1u);
  // 30 in the first run's three rows, then 2 a second from the re-attach (second 32) on.
  uint64_t first_half = 30;
  uint64_t second_half = 2 * (60 - 32);
  EXPECT_EQ(requests(minutes[0]), first_half + second_half);
}

TEST_F(MetricsCollectorTest, MinutesThatEndedWithoutAControllerAreRolledUpLate) {
  {
    MetricsCollector first = collector();
    for (uint64_t k = 1; k <= 45; ++k) second(first, 10, totals(k));
  }
  EXPECT_TRUE(rows(MetricsResolution::k1m).empty());
  clock_.advance(3 * kMinute);  // nobody ran at the minute's end
  MetricsCollector next = collector();
  next.tick();
  std::vector<MetricsRow> minutes = rows(MetricsResolution::k1m);
  ASSERT_EQ(minutes.size(), 1u);
  EXPECT_EQ(minutes[0].bucket_ms, kMinuteStart);
  EXPECT_EQ(requests(minutes[0]), 40u);  // the four whole 10 s buckets
}

TEST_F(MetricsCollectorTest, PruneDropsRowsOlderThanTheirRetention) {
  MetricsCollector c = collector();
  std::vector<MetricsRow> old_tens;
  std::vector<MetricsRow> old_minutes;
  int64_t now = clock_.now();
  for (int64_t age : {2 * kDay, 25 * kHour, 23 * kHour}) {
    int64_t b = (now - age) / 10'000 * 10'000;
    old_tens.push_back(MetricsRow{"web", b, totals(1)});
  }
  for (int64_t age : {40 * kDay, 31 * kDay, 29 * kDay}) {
    int64_t b = (now - age) / kMinute * kMinute;
    old_minutes.push_back(MetricsRow{"web", b, totals(1)});
  }
  ASSERT_TRUE(store_.insertMetrics(MetricsResolution::k10s, old_tens).ok());
  ASSERT_TRUE(store_.insertMetrics(MetricsResolution::k1m, old_minutes).ok());
  c.tick();  // the first tick prunes
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_10s"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_1m"), 1);
  // Time passes: the survivors age out on a later prune, not before prune_every_ms.
  clock_.advance(2 * kHour);
  c.tick();
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_10s"), 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_1m"), 1);
  clock_.advance(kDay);
  c.tick();
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_1m"), 0);
}

TEST_F(MetricsCollectorTest, PruneWaitsForItsInterval) {
  state::Retention short_retention;
  short_retention.metrics_10s_ms = 30 * kSecond;
  MetricsCollector c = collector(short_retention);
  for (uint64_t k = 1; k <= 60; ++k) second(c, 10, totals(k));
  // Pruned once at the first tick only: all six rows are still there.
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_10s"), 6);
  clock_.advance(10 * kMinute);
  c.tick();
  // Gone; only the row this very tick wrote (the worker is still live) is left.
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_10s WHERE bucket_ms < " +
                  std::to_string(kMinuteStart + kMinute)),
            0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM metrics_10s"), 1);
}

TEST_F(MetricsCollectorTest, RecentIsAboutTheLastTenSeconds) {
  MetricsCollector c = collector();
  EXPECT_FALSE(c.recent("web").known);
  for (uint64_t k = 1; k <= 30; ++k) second(c, 10, totals(k < 20 ? k : 20 + (k - 20) * 5));
  MetricsCollector::Window w = c.recent("web");
  EXPECT_TRUE(w.known);
  EXPECT_EQ(w.to_ms - w.from_ms, 10 * kSecond);
  EXPECT_EQ(w.figures.requests(), 50u);
}

TEST_F(MetricsCollectorTest, FiveMinutesComeFromMemoryLongerWindowsFromTheDb) {
  MetricsCollector c = collector();
  // 10 minutes at 1 request/s, then 20 requests in the last second.
  uint64_t total = 0;
  for (int k = 1; k <= 600; ++k) second(c, 10, totals(++total));
  total += 20;
  second(c, 10, totals(total));
  common::Result<MetricsCollector::Window> five = c.window("web", 5 * kMinute);
  ASSERT_TRUE(five.ok());
  // From the boundary at or before now - 5 min: 300 s + the current partial bucket.
  EXPECT_EQ(five->from_ms, kMinuteStart + 300 * kSecond);
  EXPECT_EQ(five->figures.requests(), 620u - 300u);
  common::Result<MetricsCollector::Window> hour = c.window("web", kHour);
  ASSERT_TRUE(hour.ok());
  EXPECT_EQ(hour->figures.requests(), total);
  // The DB part: delete it behind the collector's back and the window shrinks to memory.
  execOther("DELETE FROM metrics_10s");
  hour = c.window("web", kHour);
  ASSERT_TRUE(hour.ok());
  EXPECT_LT(hour->figures.requests(), total);
  EXPECT_EQ(hour->figures.requests(), 620u - 210u);  // memory holds back to 210 s
}

TEST_F(MetricsCollectorTest, AWeekReadsMinuteRowsOfAPreviousRun) {
  std::vector<MetricsRow> minutes;
  int64_t now = clock_.now();
  for (int day = 1; day <= 6; ++day) {
    minutes.push_back(MetricsRow{"web", (now - day * kDay) / kMinute * kMinute, totals(100)});
  }
  ASSERT_TRUE(store_.insertMetrics(MetricsResolution::k1m, minutes).ok());
  MetricsCollector c = collector();
  for (uint64_t k = 1; k <= 5; ++k) second(c, 10, totals(k));
  common::Result<MetricsCollector::Window> week = c.window("web", 7 * kDay);
  ASSERT_TRUE(week.ok());
  EXPECT_EQ(week->figures.requests(), 605u);
  EXPECT_EQ(c.window("web", kHour)->figures.requests(), 5u);
  // An instance the collector never heard of reads the DB alone.
  common::Result<MetricsCollector::Window> idle = c.window("idle", 7 * kDay);
  ASSERT_TRUE(idle.ok());
  EXPECT_FALSE(idle->known);
  EXPECT_EQ(idle->figures.requests(), 0u);
}

TEST_F(MetricsCollectorTest, ForgetDropsAnInstance) {
  MetricsCollector c = collector();
  second(c, 10, totals(5));
  ASSERT_EQ(c.totals().size(), 1u);
  c.forget("web");
  EXPECT_TRUE(c.totals().empty());
  EXPECT_EQ(c.liveWorkers("web"), 0u);
}

// One upstream "api" with one server: `requests` answered, `active` in flight, down or up.
std::vector<common::metrics::UpstreamMetrics> api(uint64_t requests, uint64_t active, bool down) {
  common::metrics::UpstreamServerMetrics s;
  s.address = "127.0.0.1:9000";
  s.loops = 2;
  s.loops_down = down ? 1 : 0;
  s.failures = down ? 3 : 0;
  s.active = active;
  s.requests = requests;
  return {{"api", {s}}};
}

TEST_F(MetricsCollectorTest, UpstreamsAreSummedOverLiveWorkersAndEndedOnesKeepTheirCounts) {
  MetricsCollector c = collector();
  c.workerUpstreams("web", 10, api(5, 1, false));
  c.workerUpstreams("web", 11, api(7, 2, true));
  c.workerUpstreams("web", 10, api(6, 0, false));  // replaces the previous figures
  std::vector<common::metrics::UpstreamMetrics> now = c.upstreamsNow("web");
  ASSERT_EQ(now.size(), 1u);
  ASSERT_EQ(now[0].servers.size(), 1u);
  EXPECT_EQ(now[0].servers[0].requests, 13u);
  EXPECT_EQ(now[0].servers[0].active, 2u);
  EXPECT_EQ(now[0].servers[0].loops, 4u);
  EXPECT_EQ(now[0].servers[0].loops_down, 1u);
  EXPECT_EQ(now[0].servers[0].failures, 3u);

  c.workerExited("web", 11);
  now = c.upstreamsNow("web");
  EXPECT_EQ(now[0].servers[0].requests, 6u);  // live workers only
  EXPECT_EQ(now[0].servers[0].loops_down, 0u);
  std::vector<common::metrics::UpstreamMetrics> totals = c.upstreamTotals("web");
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].servers[0].requests, 13u);  // the ended worker's 7 stay
  EXPECT_EQ(totals[0].servers[0].active, 0u);     // its gauges do not
  EXPECT_EQ(totals[0].servers[0].loops_down, 0u);
  EXPECT_EQ(totals[0].servers[0].loops, 2u);

  EXPECT_TRUE(c.upstreamsNow("idle").empty());
  c.forget("web");
  EXPECT_TRUE(c.upstreamTotals("web").empty());
}

TEST_F(MetricsCollectorTest, AnInstanceFirstSeenJustAfterABoundaryIsCountedOnce) {
  MetricsCollector c = collector();
  // The boundary at kMinuteStart + 10 s passed, but the loop was busy: its tick comes only
  // after the instance's first figures, so the bucket it closes began before the instance.
  clock_.set(kMinuteStart + 10 * kSecond + 200);
  c.workerSnapshot("web", 10, true, totals(40));
  c.tick();
  EXPECT_EQ(requests(rows(MetricsResolution::k10s).at(0)), 40u);
  for (int k = 0; k < 3; ++k) {
    clock_.advance(kSecond);
    c.workerSnapshot("web", 10, true, totals(40));
    c.tick();
  }
  for (int64_t span : {10 * kSecond, kMinute, 5 * kMinute, kHour}) {
    common::Result<MetricsCollector::Window> w = c.window("web", span);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->figures.requests(), 40u) << span;
  }
}

}  // namespace
}  // namespace scalws::controller
