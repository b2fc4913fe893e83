// The reverse proxy's figures per [upstream] and per server: what a worker reports with its
// metrics (summed over its loops) and the controller shows in `instance show`, `instance
// metrics` and Prometheus (summed over the instance's workers).
//
// Counters are monotonic since the worker started; `active`, `idle` and the health fields
// are gauges as of the report.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/metrics/latency_buckets.h"
#include "common/status.h"

namespace scalws::common::metrics {

struct UpstreamServerMetrics {
  std::string address;  // "10.0.0.7:9000", "[::1]:80 (api.internal)", "unix:/run/api.sock"
  bool backup = false;
  uint32_t loops = 0;              // event loops that have sent to the upstream
  uint32_t loops_down = 0;         // of those, how many see the server down now
  int64_t down_since_unix_ms = 0;  // the earliest of those, when down somewhere
  uint64_t failures = 0;           // counted against its health now (the most of any loop)
  uint64_t active = 0;             // requests in flight
  uint64_t idle = 0;               // kept idle connections
  uint64_t requests = 0;           // answered
  uint64_t responses_5xx = 0;
  uint64_t connect_failures = 0;
  uint64_t latency_sum_us = 0;  // request out → answer complete
  std::array<uint64_t, kLatencyBuckets> latency{};

  friend bool operator==(const UpstreamServerMetrics&, const UpstreamServerMetrics&) = default;
};

struct UpstreamMetrics {
  std::string name;
  std::vector<UpstreamServerMetrics> servers;  // in config order

  friend bool operator==(const UpstreamMetrics&, const UpstreamMetrics&) = default;
};

// Adds `more` into `into`: the same upstream (by name) and server (by address) are summed
// (gauges too; `failures` and `down_since_unix_ms` take the worst), others are appended.
void addUpstreamMetrics(std::vector<UpstreamMetrics>& into,
                        const std::vector<UpstreamMetrics>& more);

nlohmann::json toJson(const std::vector<UpstreamMetrics>& upstreams);
// Refuses anything but the shape toJson writes.
Result<std::vector<UpstreamMetrics>> upstreamMetricsFromJson(const nlohmann::json& j);

}  // namespace scalws::common::metrics
