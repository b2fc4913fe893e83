#include "common/metrics/metrics_snapshot.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

namespace scalws::common::metrics {
namespace {

MetricsSnapshot sample() {
  MetricsSnapshot s;
  s.requests_by_class = {0, 10, 2, 3, 1};
  s.requests_by_action[static_cast<size_t>(Action::kStatic)] = 12;
  s.requests_by_action[static_cast<size_t>(Action::kPhp)] = 4;
  s.bytes_in = 1000;
  s.bytes_out = 50000;
  s.conn_active = 7;
  s.php_wait_us = 1234;
  s.rss_bytes = 4 << 20;
  s.latency[3] = 5;
  s.latency[20] = 11;
  return s;
}

TEST(MetricsSnapshotTest, JsonRoundTrip) {
  MetricsSnapshot s = sample();
  auto back = metricsFromJson(toJson(s));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(s.requests(), 16u);
}

TEST(MetricsSnapshotTest, RefusesWhatToJsonNeverWrites) {
  nlohmann::json j = toJson(sample());
  j.erase("bytes_out");
  EXPECT_FALSE(metricsFromJson(j).ok());
  j = toJson(sample());
  j["bytes_in"] = -1;
  EXPECT_FALSE(metricsFromJson(j).ok());
  j = toJson(sample());
  j["latency_buckets"].push_back(1);
  EXPECT_FALSE(metricsFromJson(j).ok());
  j = toJson(sample());
  j["requests_by_action"].erase("php");
  EXPECT_FALSE(metricsFromJson(j).ok());
  EXPECT_FALSE(metricsFromJson(nlohmann::json::array()).ok());
}

TEST(MetricsSnapshotTest, AddSumsEverything) {
  MetricsSnapshot a = sample();
  a.add(sample());
  EXPECT_EQ(a.requests(), 32u);
  EXPECT_EQ(a.latency[20], 22u);
  EXPECT_EQ(a.conn_active, 14u);
  EXPECT_EQ(a.php_wait_us, 2468u);
}

// Every figure distinct, scaled by k: filled through the field tables, so a figure added to
// the list is covered here without a word changed.
MetricsSnapshot filled(uint64_t k) {
  MetricsSnapshot s;
  uint64_t v = 1;
  for (const LabelledField& f : kLabelledFields) {
    for (uint64_t& c : f.values(s)) c = v++ * k;
  }
  for (const ScalarField& f : kScalarFields) s.*f.member = v++ * k;
  for (size_t i = 0; i < kLatencyBuckets; ++i) s.latency[i] = i * k;
  return s;
}

TEST(MetricsSnapshotTest, TheFieldTablesCoverEveryMember) {
  // A member outside the tables would be missed by JSON, the DB and Prometheus: filled()
  // writes through the tables only, so every uint64_t of the struct must be non-zero.
  MetricsSnapshot s = filled(1);
  s.latency[0] = 1;
  const auto* words = reinterpret_cast<const uint64_t*>(&s);
  static_assert(sizeof(MetricsSnapshot) % sizeof(uint64_t) == 0);
  for (size_t i = 0; i < sizeof(MetricsSnapshot) / sizeof(uint64_t); ++i) {
    EXPECT_NE(words[i], 0u) << "word " << i << " is in no field table";
  }
  std::set<std::string_view> names;
  for (const ScalarField& f : kScalarFields) EXPECT_TRUE(names.insert(f.name).second) << f.name;
  for (const LabelledField& f : kLabelledFields) EXPECT_TRUE(names.insert(f.name).second);
}

TEST(MetricsSnapshotTest, IncreaseSubtractsCountersAndKeepsTheNewerGauges) {
  MetricsSnapshot before = filled(1);
  MetricsSnapshot now = filled(3);
  MetricsSnapshot d = metricsIncrease(now, before);
  EXPECT_EQ(d.requests_by_class[1], now.requests_by_class[1] - before.requests_by_class[1]);
  EXPECT_EQ(d.requests_by_action[6], now.requests_by_action[6] - before.requests_by_action[6]);
  EXPECT_EQ(d.bytes_out, now.bytes_out - before.bytes_out);
  EXPECT_EQ(d.cpu_us, now.cpu_us - before.cpu_us);
  EXPECT_EQ(d.latency[10], 20u);
  EXPECT_EQ(d.conn_active, now.conn_active);  // gauges: as they are now
  EXPECT_EQ(d.rss_bytes, now.rss_bytes);
}

TEST(MetricsSnapshotTest, IncreaseNeverGoesNegative) {
  MetricsSnapshot d = metricsIncrease(filled(1), filled(2));
  EXPECT_EQ(d.requests(), 0u);
  EXPECT_EQ(d.bytes_in, 0u);
  EXPECT_EQ(d.latency[5], 0u);
  EXPECT_EQ(d.conn_active, filled(1).conn_active);
}

TEST(MetricsSnapshotTest, FoldEndedKeepsCountersClosesConnectionsDropsGauges) {
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

TEST(MetricsSnapshotTest, CountersWentBackSeesAnyCounterButNotGauges) {
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

TEST(MetricsSnapshotTest, ActionNames) {
  EXPECT_EQ(actionFromName("static"), Action::kStatic);
  EXPECT_EQ(actionFromName("php"), Action::kPhp);
  EXPECT_EQ(actionFromName("unheard-of"), Action::kOther);
  EXPECT_EQ(actionName(Action::kStatus), "status");
}

}  // namespace
}  // namespace scalws::common::metrics
