// The proxy's per-upstream figures: summed over workers, and through JSON and back.
#include "common/metrics/upstream_metrics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace scalws::common::metrics {
namespace {

UpstreamServerMetrics server(const std::string& address, uint64_t requests) {
  UpstreamServerMetrics s;
  s.address = address;
  s.loops = 1;
  s.requests = requests;
  s.latency[3] = requests;
  return s;
}

TEST(UpstreamMetrics, SumsByNameAndAddress) {
  std::vector<UpstreamMetrics> a = {{"api", {server("10.0.0.1:80", 3), server("10.0.0.2:80", 1)}}};
  UpstreamServerMetrics down = server("10.0.0.2:80", 2);
  down.loops_down = 1;
  down.down_since_unix_ms = 5000;
  down.failures = 3;
  std::vector<UpstreamMetrics> b = {{"api", {down, server("10.0.0.3:80", 7)}},
                                    {"web", {server("x:1", 1)}}};
  addUpstreamMetrics(a, b);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(a[0].servers.size(), 3u);
  EXPECT_EQ(a[0].servers[0].requests, 3u);
  EXPECT_EQ(a[0].servers[1].requests, 3u);
  EXPECT_EQ(a[0].servers[1].loops, 2u);
  EXPECT_EQ(a[0].servers[1].loops_down, 1u);
  EXPECT_EQ(a[0].servers[1].down_since_unix_ms, 5000);
  EXPECT_EQ(a[0].servers[1].failures, 3u);
  EXPECT_EQ(a[0].servers[1].latency[3], 3u);
  EXPECT_EQ(a[0].servers[2].address, "10.0.0.3:80");
  EXPECT_EQ(a[1].name, "web");
}

TEST(UpstreamMetrics, JsonRoundTrip) {
  UpstreamServerMetrics s = server("[::1]:80 (api.internal)", 9);
  s.backup = true;
  s.active = 2;
  s.idle = 4;
  s.responses_5xx = 1;
  s.connect_failures = 5;
  s.latency_sum_us = 12345;
  s.down_since_unix_ms = 1700000000000;
  std::vector<UpstreamMetrics> in = {{"api", {s}}, {"empty", {}}};
  auto back = upstreamMetricsFromJson(toJson(in));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, in);
}

TEST(UpstreamMetrics, RefusesOtherShapes) {
  EXPECT_FALSE(upstreamMetricsFromJson(nlohmann::json::object()).ok());
  EXPECT_FALSE(upstreamMetricsFromJson(nlohmann::json::parse(R"([{"name": "a"}])")).ok());
  nlohmann::json j = toJson({{"api", {server("a:1", 1)}}});
  j[0]["servers"][0]["requests"] = -1;
  EXPECT_FALSE(upstreamMetricsFromJson(j).ok());
  j = toJson({{"api", {server("a:1", 1)}}});
  j[0]["servers"][0]["latency_buckets"].erase(0);
  EXPECT_FALSE(upstreamMetricsFromJson(j).ok());
}

}  // namespace
}  // namespace scalws::common::metrics
