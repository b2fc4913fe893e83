#include "controller/metrics/metrics_report.h"

#include <algorithm>
#include <cmath>

#include "common/metrics/latency_buckets.h"

namespace scalws::controller {

using common::metrics::latencyPercentileUs;
using ipc::Json;

namespace {

// Rates and fractions to 4 decimals: what a person or a script needs, without float noise.
double rounded(double v) {
  return std::round(v * 10'000.0) / 10'000.0;
}

double fraction(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : rounded(static_cast<double>(part) / static_cast<double>(whole));
}

double seconds(const MetricsCollector::Window& w) {
  return std::max(0.001, static_cast<double>(w.to_ms - w.from_ms) / 1000.0);
}

double perSecond(uint64_t n, double secs) {
  return rounded(static_cast<double>(n) / secs);
}

}  // namespace

Json figuresJson(const MetricsCollector::Window& w) {
  const MetricsSnapshot& s = w.figures;
  double secs = seconds(w);
  uint64_t requests = s.requests();
  Json classes = Json::object();
  for (size_t i = 0; i < s.requests_by_class.size(); ++i) {
    classes[std::string(common::metrics::kClassLabels[i])] = s.requests_by_class[i];
  }
  Json actions = Json::object();
  for (size_t i = 0; i < s.requests_by_action.size(); ++i) {
    actions[std::string(common::metrics::kActionLabels[i])] = s.requests_by_action[i];
  }
  uint64_t lookups = s.file_cache_hits + s.file_cache_misses;
  Json out = {
      {"from_ms", w.from_ms},
      {"to_ms", w.to_ms},
      {"seconds", rounded(secs)},
      {"requests", requests},
      {"requests_per_s", perSecond(requests, secs)},
      {"by_class", classes},
      {"by_action", actions},
      {"error_rate",
       {{"4xx", fraction(s.requests_by_class[3], requests)},
        {"5xx", fraction(s.requests_by_class[4], requests)}}},
      {"latency_us",
       {{"p50", latencyPercentileUs(s.latency, 0.50)},
        {"p90", latencyPercentileUs(s.latency, 0.90)},
        {"p99", latencyPercentileUs(s.latency, 0.99)},
        {"mean", requests == 0 ? 0 : s.latency_sum_us / requests}}},
      {"bytes_in", s.bytes_in},
      {"bytes_out", s.bytes_out},
      {"bytes_in_per_s", perSecond(s.bytes_in, secs)},
      {"bytes_out_per_s", perSecond(s.bytes_out, secs)},
      {"connections",
       {{"accepted", s.conn_accepted},
        {"closed", s.conn_closed},
        {"active", s.conn_active},
        {"accepted_per_s", perSecond(s.conn_accepted, secs)}}},
      {"tls_handshakes", s.tls_handshakes},
      {"open_file_cache",
       {{"hits", s.file_cache_hits},
        {"misses", s.file_cache_misses},
        {"hit_rate", lookups == 0 ? Json(nullptr) : Json(fraction(s.file_cache_hits, lookups))}}},
      {"php",
       {{"connects", s.php_connects},
        {"reuses", s.php_reuses},
        {"errors", s.php_errors},
        {"waits", s.php_waits},
        {"wait_mean_us", s.php_waits == 0 ? 0 : s.php_wait_us / s.php_waits}}},
      {"upstream",
       {{"connects", s.upstream_connects},
        {"reuses", s.upstream_reuses},
        {"errors", s.upstream_errors}}},
      {"cpu_percent", rounded(static_cast<double>(s.cpu_us) / (secs * 1e6) * 100.0)},
      {"rss_bytes", s.rss_bytes},
  };
  return out;
}

common::Result<Json> instanceMetricsJson(MetricsCollector& collector, const std::string& name,
                                         const std::string& state, size_t processes,
                                         int64_t since_ms) {
  common::Result<MetricsCollector::Window> window = collector.window(name, since_ms);
  if (!window.ok()) return window.status();
  return Json{{"name", name},
              {"status", state},
              {"processes", processes},
              {"reporting", collector.liveWorkers(name)},
              {"since_ms", since_ms},
              {"now", figuresJson(collector.recent(name))},
              {"window", figuresJson(*window)},
              {"upstreams", common::metrics::toJson(collector.upstreamsNow(name))},
              {"latency_note", kLatencyNote}};
}

Json statusLineJson(const MetricsCollector& collector, const std::string& name,
                    const std::string& state) {
  MetricsCollector::Window w = collector.recent(name);
  const MetricsSnapshot& s = w.figures;
  uint64_t requests = s.requests();
  return {{"name", name},
          {"status", state},
          {"requests_per_s", perSecond(requests, seconds(w))},
          {"p99_us", latencyPercentileUs(s.latency, 0.99)},
          {"error_rate_4xx", fraction(s.requests_by_class[3], requests)},
          {"error_rate_5xx", fraction(s.requests_by_class[4], requests)}};
}

}  // namespace scalws::controller
