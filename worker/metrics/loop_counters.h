// One event loop's counters: written only by that loop, with no lock and no
// locked instruction (RelaxedCounter); read by the status page and the metrics sender
// from any thread — or any process, when the block lives in a MetricsArea.
#pragma once

#include <array>

#include "common/metrics/metrics_snapshot.h"
#include "common/metrics/relaxed_counter.h"

namespace scalws::worker {

using common::metrics::RelaxedCounter;

struct LoopCounters {
  std::array<RelaxedCounter, 5> requests_by_class;
  std::array<RelaxedCounter, common::metrics::kActionCount> requests_by_action;
  RelaxedCounter bytes_in;
  RelaxedCounter bytes_out;
  RelaxedCounter conn_accepted;
  RelaxedCounter conn_closed;
  RelaxedCounter conn_active;
  RelaxedCounter tls_handshakes;
  RelaxedCounter http3_requests;
  RelaxedCounter quic_handshakes;
  RelaxedCounter quic_retries;
  RelaxedCounter quic_migrations;
  RelaxedCounter quic_lost_packets;
  RelaxedCounter file_cache_hits;
  RelaxedCounter file_cache_misses;
  RelaxedCounter upstream_connects;
  RelaxedCounter upstream_reuses;
  RelaxedCounter upstream_errors;
  RelaxedCounter php_connects;
  RelaxedCounter php_reuses;
  RelaxedCounter php_errors;
  RelaxedCounter php_waits;
  RelaxedCounter php_wait_us;
  // Process gauges, refreshed about once a second by one loop of the process.
  RelaxedCounter cpu_us;
  RelaxedCounter rss_bytes;
  RelaxedCounter latency_sum_us;
  std::array<RelaxedCounter, common::metrics::kLatencyBuckets> latency;

  // One answered request: its status, the action that answered and its duration.
  void countRequest(uint16_t status, common::metrics::Action action, uint64_t us) noexcept;
  // Adds this block's values into `out`.
  void addTo(common::metrics::MetricsSnapshot& out) const;
  void reset() noexcept;
};

}  // namespace scalws::worker
