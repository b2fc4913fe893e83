#include <gtest/gtest.h>

#include "controller/state/state_store.h"
#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller::state {
namespace {

using common::Result;
using common::StatusCode;

constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kDayMs = 24 * kHourMs;

class HistoryStoreTest : public StoreTest {};

// A row with every integer column set to a distinct value.
MetricsRow fullRow(const std::string& instance, int64_t bucket_ms, uint64_t seed) {
  MetricsRow row;
  row.instance = instance;
  row.bucket_ms = bucket_ms;
  uint64_t value = seed;
  for (const MetricsColumn& column : metricsColumns()) column.of(row.figures) = value++;
  row.figures.latency[1] = 3;
  row.figures.latency[4] = seed;
  row.figures.latency[5] = 1;
  return row;
}

TEST_F(HistoryStoreTest, EventsNewestFirstFilteredAndLimited) {
  StateStore store = open();
  ASSERT_TRUE(store.appendEvent("web", "worker.crash", "pid 10 exited with signal 9").ok());
  clock_.advance(1);
  ASSERT_TRUE(store.appendEvent(std::nullopt, "controller.start", "started").ok());
  clock_.advance(1);
  Result<EventRecord> last = store.appendEvent("web", "worker.restart", "pid 11");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->time_ms, kStartMs + 2);
  EXPECT_GT(last->id, 0);

  Result<std::vector<EventRecord>> web = store.recentEvents("web", 10);
  ASSERT_TRUE(web.ok());
  ASSERT_EQ(web->size(), 2u);
  EXPECT_EQ((*web)[0].kind, "worker.restart");
  EXPECT_EQ((*web)[0].id, last->id);
  EXPECT_EQ((*web)[1].message, "pid 10 exited with signal 9");
  EXPECT_EQ((*web)[1].instance, "web");

  Result<std::vector<EventRecord>> all = store.recentEvents(std::nullopt, 2);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].kind, "worker.restart");
  EXPECT_EQ((*all)[1].kind, "controller.start");
  EXPECT_EQ((*all)[1].instance, std::nullopt);

  EXPECT_TRUE(store.recentEvents("web", 0)->empty());
  EXPECT_EQ(store.recentEvents("web", -1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.appendEvent("web", "", "x").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(HistoryStoreTest, MetricsRoundTripEveryColumn) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  std::vector<MetricsRow> rows = {fullRow("web", 10'000, 100), fullRow("web", 20'000, 200)};
  rows[1].figures.latency = {};
  rows[1].figures.bytes_out = uint64_t{1} << 62;
  Result<int64_t> written = store.insertMetrics(MetricsResolution::k10s, rows);
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(*written, 2);
  Result<std::vector<MetricsRow>> back =
      store.listMetrics("web", MetricsResolution::k10s, 0, 30'000);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0], rows[0]);
  EXPECT_EQ((*back)[1], rows[1]);
  // Nothing landed in the other resolution.
  EXPECT_TRUE(store.listMetrics("web", MetricsResolution::k1m, 0, kDayMs)->empty());
}

TEST_F(HistoryStoreTest, MetricsRangeIsHalfOpen) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  std::vector<MetricsRow> rows;
  for (int64_t t = 0; t < 10; ++t) rows.push_back(fullRow("web", t * 60'000, t));
  ASSERT_TRUE(store.insertMetrics(MetricsResolution::k1m, rows).ok());
  Result<std::vector<MetricsRow>> part =
      store.listMetrics("web", MetricsResolution::k1m, 2 * 60'000, 5 * 60'000);
  ASSERT_TRUE(part.ok());
  ASSERT_EQ(part->size(), 3u);
  EXPECT_EQ((*part)[0].bucket_ms, 2 * 60'000);
  EXPECT_EQ((*part)[2].bucket_ms, 4 * 60'000);
  EXPECT_TRUE(store.listMetrics("other", MetricsResolution::k1m, 0, kDayMs)->empty());
}

TEST_F(HistoryStoreTest, ReinsertReplacesAndRemovedInstancesAreSkipped) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  std::vector<MetricsRow> rows = {fullRow("web", 10'000, 1), fullRow("gone", 10'000, 1)};
  Result<int64_t> written = store.insertMetrics(MetricsResolution::k10s, rows);
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(*written, 1);
  rows[0].figures.bytes_in = 4242;
  written = store.insertMetrics(MetricsResolution::k10s, std::span(rows).first(1));
  ASSERT_TRUE(written.ok());
  Result<std::vector<MetricsRow>> back =
      store.listMetrics("web", MetricsResolution::k10s, 0, kDayMs);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].figures.bytes_in, 4242u);
  EXPECT_EQ(count("SELECT count(*) FROM metrics_10s"), 1);
}

TEST_F(HistoryStoreTest, ABadRowRefusesTheWholeBatch) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  std::vector<MetricsRow> rows = {fullRow("web", 60'000, 1), fullRow("web", 70'000, 1)};
  Result<int64_t> written = store.insertMetrics(MetricsResolution::k1m, rows);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(written.status().message().find("not a multiple of 60000"), std::string::npos)
      << written.status().message();
  rows[1].bucket_ms = 120'000;
  rows[1].figures.cpu_us = uint64_t{1} << 63;  // does not fit SQLite's integers
  EXPECT_EQ(store.insertMetrics(MetricsResolution::k1m, rows).status().code(),
            StatusCode::kInvalidArgument);
  rows[1].figures.cpu_us = 0;
  rows[1].figures.latency[3] = uint64_t{1} << 63;
  EXPECT_EQ(store.insertMetrics(MetricsResolution::k1m, rows).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(count("SELECT count(*) FROM metrics_1m"), 0);
}

TEST_F(HistoryStoreTest, PruneDropsRowsOlderThanTheirRetention) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  const int64_t now = 100 * kDayMs;
  // 10 s rows: 25 h old, exactly 24 h old, 1 h old.
  std::vector<MetricsRow> fine = {fullRow("web", now - 25 * kHourMs, 1),
                                  fullRow("web", now - 24 * kHourMs, 2),
                                  fullRow("web", now - kHourMs, 3)};
  // 1 min rows: 31 days old, 29 days old.
  std::vector<MetricsRow> coarse = {fullRow("web", now - 31 * kDayMs, 1),
                                    fullRow("web", now - 29 * kDayMs, 2)};
  ASSERT_TRUE(store.insertMetrics(MetricsResolution::k10s, fine).ok());
  ASSERT_TRUE(store.insertMetrics(MetricsResolution::k1m, coarse).ok());
  clock_.set(now - 91 * kDayMs);
  ASSERT_TRUE(store.appendEvent("web", "old", "91 days ago").ok());
  clock_.set(now - kDayMs);
  ASSERT_TRUE(store.appendEvent("web", "recent", "yesterday").ok());

  // Pruning uses the time it is given, not the store's clock.
  clock_.set(0);
  Result<PruneCounts> pruned = store.prune(now);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  EXPECT_EQ(pruned->metrics_10s, 1);
  EXPECT_EQ(pruned->metrics_1m, 1);
  EXPECT_EQ(pruned->events, 1);
  Result<std::vector<MetricsRow>> left =
      store.listMetrics("web", MetricsResolution::k10s, 0, now + 1);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ((*left)[0].bucket_ms, now - 24 * kHourMs);  // not older than 24 h: kept
  left = store.listMetrics("web", MetricsResolution::k1m, 0, now + 1);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].bucket_ms, now - 29 * kDayMs);
  Result<std::vector<EventRecord>> events = store.recentEvents("web", 10);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);  // "recent" and instance.added
  EXPECT_EQ((*events)[0].kind, "recent");

  // An hour later the boundary row has aged out; a second prune at the same time is a no-op.
  pruned = store.prune(now + kHourMs);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->metrics_10s, 1);
  pruned = store.prune(now + kHourMs);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->metrics_10s + pruned->metrics_1m + pruned->events, 0);

  // Custom retention.
  Retention keep_nothing{.metrics_10s_ms = 0, .metrics_1m_ms = 0, .events_ms = 0};
  pruned = store.prune(now + kHourMs, keep_nothing);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->metrics_10s, 1);
  EXPECT_EQ(pruned->metrics_1m, 1);
  EXPECT_EQ(count("SELECT count(*) FROM metrics_10s") + count("SELECT count(*) FROM metrics_1m"),
            0);
}

}  // namespace
}  // namespace scalws::controller::state
