#include "common/metrics/metrics_snapshot.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
  s.http3_requests = 9;
  s.quic_retries = 2;
  s.quic_lost_packets = 3;
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

TEST(MetricsSnapshotTest, Http3FieldsMayBeAbsentFromAnOlderWorker) {
  nlohmann::json j = toJson(sample());
  EXPECT_EQ(j["http3_requests"], 9);
  for (const char* added : {"http3_requests", "quic_handshakes", "quic_retries", "quic_migrations",
                            "quic_lost_packets"}) {
    j.erase(added);
  }
  auto back = metricsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->http3_requests, 0u);
  EXPECT_EQ(back->bytes_out, 50000u);
  j["quic_retries"] = -1;  // present but wrong is still refused
  EXPECT_FALSE(metricsFromJson(j).ok());
}

TEST(MetricsSnapshotTest, AddSumsEverything) {
  MetricsSnapshot a = sample();
  a.add(sample());
  EXPECT_EQ(a.requests(), 32u);
  EXPECT_EQ(a.latency[20], 22u);
  EXPECT_EQ(a.conn_active, 14u);
  EXPECT_EQ(a.php_wait_us, 2468u);
}

TEST(MetricsSnapshotTest, ActionNames) {
  EXPECT_EQ(actionFromName("static"), Action::kStatic);
  EXPECT_EQ(actionFromName("php"), Action::kPhp);
  EXPECT_EQ(actionFromName("unheard-of"), Action::kOther);
  EXPECT_EQ(actionName(Action::kStatus), "status");
}

}  // namespace
}  // namespace scalws::common::metrics
