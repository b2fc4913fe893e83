// A worker's (or an instance's) figures at one moment: monotonic totals since the worker
// started, plus gauges (active connections, RSS). Workers send it every second; the
// standalone status page answers it; the controller subtracts two of them to get a rate.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

#include "common/metrics/latency_buckets.h"
#include "common/status.h"

namespace scalws::common::metrics {

// The route action that answered; the order is the wire and storage order.
enum class Action : uint8_t { kStatic, kRespond, kProxy, kPhp, kApp, kStatus, kOther };
inline constexpr size_t kActionCount = 7;
std::string_view actionName(Action a);
// From a Handler's actionName() ("static", "respond", ...); unknown → kOther.
Action actionFromName(std::string_view name);

struct MetricsSnapshot {
  std::array<uint64_t, 5> requests_by_class{};  // [0] 1xx ... [4] 5xx
  std::array<uint64_t, kActionCount> requests_by_action{};
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t conn_accepted = 0;
  uint64_t conn_closed = 0;
  uint64_t conn_active = 0;        // gauge
  uint64_t tls_handshakes = 0;     // over TCP and over QUIC
  uint64_t http3_requests = 0;     // of the requests above, those answered over HTTP/3
  uint64_t quic_handshakes = 0;    // QUIC connections established
  uint64_t quic_retries = 0;       // Retry packets sent (address validation)
  uint64_t quic_migrations = 0;    // clients validated on a new address
  uint64_t quic_lost_packets = 0;  // QUIC packets with request or response data lost
  uint64_t file_cache_hits = 0;
  uint64_t file_cache_misses = 0;
  uint64_t upstream_connects = 0;
  uint64_t upstream_reuses = 0;
  uint64_t upstream_errors = 0;
  uint64_t php_connects = 0;
  uint64_t php_reuses = 0;
  uint64_t php_errors = 0;
  uint64_t php_waits = 0;
  uint64_t php_wait_us = 0;
  uint64_t cpu_us = 0;     // utime + stime since the process started
  uint64_t rss_bytes = 0;  // gauge
  uint64_t latency_sum_us = 0;
  std::array<uint64_t, kLatencyBuckets> latency{};

  uint64_t requests() const;
  // Adds counters and gauges alike (summing processes of one instance).
  void add(const MetricsSnapshot& other);

  friend bool operator==(const MetricsSnapshot&, const MetricsSnapshot&) = default;
};

nlohmann::json toJson(const MetricsSnapshot& s);
// Refuses anything but the shape toJson writes (missing or negative fields, a histogram
// of the wrong size): the controller never stores a half-read snapshot.
Result<MetricsSnapshot> metricsFromJson(const nlohmann::json& j);

}  // namespace scalws::common::metrics
