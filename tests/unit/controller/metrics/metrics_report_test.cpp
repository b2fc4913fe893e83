#include "controller/metrics/metrics_report.h"

#include <gtest/gtest.h>

#include "common/metrics/latency_buckets.h"
#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller {
namespace {

using common::metrics::latencyBucket;
using common::metrics::latencyBucketUpperUs;
using ipc::Json;

MetricsCollector::Window window(const MetricsSnapshot& s, int64_t seconds) {
  MetricsCollector::Window w;
  w.figures = s;
  w.from_ms = 1'000'000;
  w.to_ms = 1'000'000 + seconds * 1000;
  w.known = true;
  return w;
}

TEST(MetricsReport, FiguresAreRatesFractionsAndBucketPercentiles) {
  MetricsSnapshot s;
  s.requests_by_class = {0, 80, 5, 10, 5};
  s.requests_by_action[0] = 30;
  s.requests_by_action[1] = 70;
  // 50 requests at ~100 µs, 40 at ~1 ms, 10 at ~50 ms.
  s.latency[latencyBucket(100)] = 50;
  s.latency[latencyBucket(1000)] = 40;
  s.latency[latencyBucket(50'000)] = 10;
  s.latency_sum_us = 50 * 100 + 40 * 1000 + 10 * 50'000;
  s.bytes_in = 2000;
  s.bytes_out = 100'000;
  s.conn_accepted = 20;
  s.conn_active = 4;
  s.file_cache_hits = 27;
  s.file_cache_misses = 3;
  s.php_waits = 4;
  s.php_wait_us = 10'000;
  s.cpu_us = 2'500'000;
  s.rss_bytes = 1 << 24;
  Json f = figuresJson(window(s, 10));
  EXPECT_EQ(f["seconds"], 10.0);
  EXPECT_EQ(f["requests"], 100u);
  EXPECT_EQ(f["requests_per_s"], 10.0);
  EXPECT_EQ(f["by_class"]["4xx"], 10u);
  EXPECT_EQ(f["by_action"]["respond"], 70u);
  EXPECT_EQ(f["error_rate"]["4xx"], 0.1);
  EXPECT_EQ(f["error_rate"]["5xx"], 0.05);
  EXPECT_EQ(f["latency_us"]["p50"], latencyBucketUpperUs(latencyBucket(100)));
  EXPECT_EQ(f["latency_us"]["p90"], latencyBucketUpperUs(latencyBucket(1000)));
  EXPECT_EQ(f["latency_us"]["p99"], latencyBucketUpperUs(latencyBucket(50'000)));
  EXPECT_GE(f["latency_us"]["p99"].get<uint64_t>(), 50'000u);
  EXPECT_LT(f["latency_us"]["p99"].get<uint64_t>(), 50'000u * 1.5);
  EXPECT_EQ(f["latency_us"]["mean"], 5450u);
  EXPECT_EQ(f["bytes_out_per_s"], 10'000.0);
  EXPECT_EQ(f["connections"]["accepted_per_s"], 2.0);
  EXPECT_EQ(f["connections"]["active"], 4u);
  EXPECT_EQ(f["open_file_cache"]["hit_rate"], 0.9);
  EXPECT_EQ(f["php"]["wait_mean_us"], 2500u);
  EXPECT_EQ(f["cpu_percent"], 25.0);
  EXPECT_EQ(f["rss_bytes"], 1u << 24);
}

TEST(MetricsReport, NothingCountedIsZerosNotDivisionsByZero) {
  Json f = figuresJson(window(MetricsSnapshot(), 0));
  EXPECT_EQ(f["requests_per_s"], 0.0);
  EXPECT_EQ(f["error_rate"]["4xx"], 0.0);
  EXPECT_EQ(f["latency_us"]["p99"], 0u);
  EXPECT_TRUE(f["open_file_cache"]["hit_rate"].is_null());
  EXPECT_EQ(f["php"]["wait_mean_us"], 0u);
}

class MetricsReportStoreTest : public state::StoreTest {};

TEST_F(MetricsReportStoreTest, InstanceMetricsAndTheStatusLine) {
  state::StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  MetricsCollector::Options o;
  o.clock = clock_.fn();
  MetricsCollector c(store, o);
  MetricsSnapshot s;
  for (int k = 1; k <= 12; ++k) {
    clock_.advance(1000);
    s.requests_by_class[1] += 9;
    s.requests_by_class[4] += 1;
    s.latency[20] += 10;
    c.workerSnapshot("web", 7, true, s);
    c.tick();
  }
  common::Result<Json> j = instanceMetricsJson(c, "web", "running", 1, 5 * 60'000);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["name"], "web");
  EXPECT_EQ((*j)["status"], "running");
  EXPECT_EQ((*j)["reporting"], 1u);
  EXPECT_EQ((*j)["since_ms"], 300'000);
  EXPECT_EQ((*j)["window"]["requests"], 120u);
  EXPECT_EQ((*j)["now"]["requests"], 100u);
  EXPECT_EQ((*j)["now"]["requests_per_s"], 10.0);
  EXPECT_NE((*j)["latency_note"].get<std::string>().find("upper bounds"), std::string::npos);
  Json line = statusLineJson(c, "web", "running");
  EXPECT_EQ(line["requests_per_s"], 10.0);
  EXPECT_EQ(line["error_rate_5xx"], 0.1);
  EXPECT_EQ(line["p99_us"], latencyBucketUpperUs(20));
  Json none = statusLineJson(c, "other", "stopped");
  EXPECT_EQ(none["requests_per_s"], 0.0);
}

}  // namespace
}  // namespace scalws::controller
