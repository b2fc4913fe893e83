#include "controller/ctl/ctl_metrics_output.h"

#include <gtest/gtest.h>

#include "controller/ctl/ctl_command.h"
#include "controller/ctl/ctl_format.h"
#include "controller/ctl/ctl_output.h"

namespace scalws::ctl {
namespace {

using ipc::Json;

TEST(CtlMetrics, SinceParsesDurationsWithinBounds) {
  EXPECT_EQ(*parseSince("5m"), 300'000);
  EXPECT_EQ(*parseSince("1h"), 3'600'000);
  EXPECT_EQ(*parseSince("24h"), 86'400'000);
  EXPECT_EQ(*parseSince("7d"), 7 * 86'400'000LL);
  EXPECT_EQ(*parseSince("90s"), 90'000);
  for (const char* bad : {"", "5", "m", "5x", "0m", "-5m", "5s", "32d", "1.5h", "5m5"}) {
    EXPECT_FALSE(parseSince(bad).ok()) << bad;
  }
}

TEST(CtlMetrics, TheCommandLine) {
  common::Result<CtlCommand> cmd =
      parseCtlArgs({"instance", "metrics", "web", "--since", "1h", "--json"}, nullptr);
  ASSERT_TRUE(cmd.ok()) << cmd.status().message();
  EXPECT_EQ(cmd->op, "instance.metrics");
  EXPECT_FALSE(cmd->write);
  EXPECT_TRUE(cmd->json);
  EXPECT_EQ(cmd->args["name"], "web");
  EXPECT_EQ(cmd->args["since_ms"], 3'600'000);
  cmd = parseCtlArgs({"instance", "metrics", "web"}, nullptr);
  ASSERT_TRUE(cmd.ok());
  EXPECT_FALSE(cmd->args.contains("since_ms"));
  EXPECT_FALSE(parseCtlArgs({"instance", "metrics"}, nullptr).ok());
  EXPECT_FALSE(parseCtlArgs({"instance", "metrics", "web", "--since", "forever"}, nullptr).ok());
  EXPECT_FALSE(parseCtlArgs({"instance", "show", "web", "--since", "1h"}, nullptr).ok());
  EXPECT_NE(std::string(kCtlUsage).find("upper bounds"), std::string::npos);
}

TEST(CtlMetrics, Formats) {
  EXPECT_EQ(formatLatencyUs(0), "-");
  EXPECT_EQ(formatLatencyUs(724), "724µs");
  EXPECT_EQ(formatLatencyUs(46'341), "46.34ms");
  EXPECT_EQ(formatLatencyUs(2'097'152), "2.10s");
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(3.5 * 1024 * 1024), "3.5 MiB");
  EXPECT_EQ(formatPercent(0.125), "12.5%");
  EXPECT_EQ(formatPercent(0), "0.0%");
  EXPECT_EQ(formatSpan(300'000), "5m");
  EXPECT_EQ(formatSpan(86'400'000), "1d");
  EXPECT_EQ(formatSpan(90'000), "90s");
  EXPECT_EQ(formatSpan(10'000), "10s");
}

Json figures(double rps, uint64_t requests) {
  return {{"seconds", 10.0},
          {"requests", requests},
          {"requests_per_s", rps},
          {"by_class", {{"2xx", requests - 1}, {"4xx", 1}}},
          {"by_action", {{"respond", requests}, {"static", 0}}},
          {"error_rate", {{"4xx", 0.25}, {"5xx", 0.0}}},
          {"latency_us", {{"p50", 91}, {"p90", 181}, {"p99", 46341}}},
          {"bytes_in_per_s", 2048.0},
          {"bytes_out_per_s", 100.0},
          {"bytes_in", 20480},
          {"bytes_out", 1000},
          {"connections", {{"accepted_per_s", 0.5}, {"active", 3}}},
          {"open_file_cache", {{"hits", 9}, {"misses", 1}, {"hit_rate", 0.9}}},
          {"php", {{"waits", 2}, {"wait_mean_us", 1500}}},
          {"cpu_percent", 12.5},
          {"rss_bytes", 10 * 1024 * 1024}};
}

TEST(CtlMetrics, InstanceMetricsTable) {
  Json r = {{"name", "web"},
            {"status", "running"},
            {"processes", 2},
            {"reporting", 2},
            {"since_ms", 3'600'000},
            {"now", figures(0.4, 4)},
            {"window", figures(1.25, 4500)},
            {"latency_note", "latency percentiles are upper bounds"}};
  std::string out = renderResult("instance.metrics", r);
  EXPECT_EQ(out.rfind("instance web: running, 2 process(es), 2 reporting\n", 0), 0u) << out;
  for (const char* want :
       {"NOW (10s)", "LAST 1h", "requests/s", "0.40", "1.25", "4500", "2xx 3, 4xx 1",
        "respond 4500", "25.0%", "latency p99", "46.34ms", "2.0 KiB", "90.0% of 10",
        "2 (mean 1.50ms)", "12.5% of a core", "10.0 MiB", "upper bounds"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  }
  EXPECT_EQ(out.find("static 0"), std::string::npos);
  // "µs" is one column wide: the cells after it stay aligned.
  r["now"]["latency_us"]["p50"] = 91;
  r["window"]["latency_us"]["p50"] = 1448;
  out = renderResult("instance.metrics", r);
  size_t header = out.find("LAST 1h");
  size_t p50 = out.find("1.45ms");
  ASSERT_NE(header, std::string::npos);
  ASSERT_NE(p50, std::string::npos);
  EXPECT_EQ(header - out.rfind('\n', header) + 1, p50 - out.rfind('\n', p50)) << out;
}

TEST(CtlMetrics, StatusGetsALinePerInstance) {
  Json r = {{"pid", 1},
            {"instances", {{"total", 2}}},
            {"instance_metrics",
             {{{"name", "web"},
               {"status", "running"},
               {"requests_per_s", 12.5},
               {"p99_us", 1448},
               {"error_rate_4xx", 0.01},
               {"error_rate_5xx", 0.0}},
              {{"name", "shop"},
               {"status", "stopped"},
               {"requests_per_s", 0.0},
               {"p99_us", 0},
               {"error_rate_4xx", 0.0},
               {"error_rate_5xx", 0.0}}}}};
  std::string out = renderResult("status", r);
  EXPECT_NE(out.find("INSTANCE  STATUS   REQ/S  P99     4XX   5XX\n"), std::string::npos) << out;
  EXPECT_NE(out.find("web       running  12.5   1.45ms  1.0%  0.0%\n"), std::string::npos) << out;
  EXPECT_NE(out.find("shop      stopped  0.00   -       0.0%  0.0%\n"), std::string::npos) << out;
  r.erase("instance_metrics");
  EXPECT_EQ(renderResult("status", r).find("INSTANCE"), std::string::npos);
}

}  // namespace
}  // namespace scalws::ctl
