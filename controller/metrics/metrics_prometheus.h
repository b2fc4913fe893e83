// The Prometheus text exposition (format 0.0.4) of every instance's monotonic totals.
// Labelled by `instance` and, where it applies, `class` (1xx..5xx) or `action`;
// never by host or path, so the series count is bounded by instances, not by traffic.
//
// Families (each with one HELP and one TYPE line, samples grouped under it):
//   scalws_requests_total{instance,class}          counter
//   scalws_action_requests_total{instance,action}  counter
//   scalws_received_bytes_total, scalws_sent_bytes_total
//   scalws_connections_accepted_total, scalws_connections_closed_total
//   scalws_connections_active                      gauge
//   scalws_tls_handshakes_total
//   scalws_open_file_cache_hits_total, scalws_open_file_cache_misses_total
//   scalws_upstream_{connects,reuses,errors}_total
//   scalws_php_{connects,reuses,errors,waits}_total, scalws_php_wait_seconds_total
//   scalws_cpu_seconds_total, scalws_resident_memory_bytes (gauge)
//   scalws_worker_processes (gauge: processes whose figures are counted)
//   scalws_request_duration_seconds                histogram: cumulative _bucket{le} at
//       every octave of the half-octave layout (1 µs .. ~67 s) and +Inf, _sum, _count
// and, when some instance proxies, per [upstream] and server (labels instance, upstream,
// server: bounded by the configuration, not by traffic):
//   scalws_upstream_server_up                      gauge: 1 when no loop sees it down
//   scalws_upstream_server_active_requests, scalws_upstream_server_idle_connections  gauges
//   scalws_upstream_server_requests_total, scalws_upstream_server_responses_5xx_total,
//   scalws_upstream_server_connect_failures_total  counters
//   scalws_upstream_server_response_seconds        histogram as above: request out to
//       answer complete
// (gauges only for servers some live worker's loop has used).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/metrics/metrics_snapshot.h"
#include "common/metrics/upstream_metrics.h"

namespace scalws::controller {

struct PrometheusInstance {
  std::string name;
  common::metrics::MetricsSnapshot total;
  size_t processes = 0;
  std::vector<common::metrics::UpstreamMetrics> upstreams;  // MetricsCollector::upstreamTotals
};

inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

std::string renderPrometheus(const std::vector<PrometheusInstance>& instances);

// A label value with \, " and newline escaped.
std::string prometheusLabelValue(std::string_view value);

}  // namespace scalws::controller
