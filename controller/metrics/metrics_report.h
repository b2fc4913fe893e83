// The JSON answers built from the collector's figures: `instance.metrics` and
// the per-instance line of `status`. Pure: figures in, JSON out.
//
//   instance.metrics {name, since_ms?} -> {name, status, processes, reporting, since_ms,
//                    now: FIGURES (about the last 10 s), window: FIGURES (since_ms back),
//                    upstreams: UPSTREAMS, latency_note}
//   FIGURES = {from_ms, to_ms, seconds, requests, requests_per_s,
//              by_class:{1xx..5xx}, by_action:{static, respond, proxy, php, app, status,
//              other}, error_rate:{4xx, 5xx} (fractions of requests),
//              latency_us:{p50, p90, p99, mean} (percentiles: histogram bucket upper
//              bounds), bytes_in, bytes_out, bytes_in_per_s, bytes_out_per_s,
//              connections:{accepted, closed, active, accepted_per_s}, tls_handshakes,
//              open_file_cache:{hits, misses, hit_rate (null without lookups)},
//              php:{connects, reuses, errors, waits, wait_mean_us},
//              upstream:{connects, reuses, errors}, cpu_percent (of one core), rss_bytes}
//   UPSTREAMS = the proxy's [upstream] tables as the live workers see them now, summed
//              over them (common/metrics/upstream_metrics.h): [{name, servers:[{address,
//              backup, loops, loops_down, down_since_ms, failures, active, idle, requests,
//              responses_5xx, connect_failures, latency_sum_us, latency_buckets}]}];
//              counters since those workers started
//   status line      {name, status, requests_per_s, p99_us, error_rate_4xx, error_rate_5xx}
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "controller/metrics/metrics_collector.h"
#include "ipc/message.h"

namespace scalws::controller {

inline constexpr int64_t kDefaultMetricsSinceMs = 5 * 60'000;
inline constexpr int64_t kMaxMetricsSinceMs = 31LL * 24 * 3600 * 1000;
inline constexpr const char* kLatencyNote =
    "latency percentiles are upper bounds of half-octave histogram buckets";

ipc::Json figuresJson(const MetricsCollector::Window& w);

// The `instance.metrics` reply; `state` and `processes` come from the runtime.
common::Result<ipc::Json> instanceMetricsJson(MetricsCollector& collector, const std::string& name,
                                              const std::string& state, size_t processes,
                                              int64_t since_ms);

ipc::Json statusLineJson(const MetricsCollector& collector, const std::string& name,
                         const std::string& state);

}  // namespace scalws::controller
