#include "worker/metrics/loop_counters.h"

namespace scalws::worker {

using common::metrics::MetricsSnapshot;

namespace {

// Scalar counters in the snapshot's order, so addTo and reset stay in one table.
struct Pair {
  RelaxedCounter LoopCounters::*counter;
  uint64_t MetricsSnapshot::*field;
};
constexpr Pair kPairs[] = {
    {&LoopCounters::bytes_in, &MetricsSnapshot::bytes_in},
    {&LoopCounters::bytes_out, &MetricsSnapshot::bytes_out},
    {&LoopCounters::conn_accepted, &MetricsSnapshot::conn_accepted},
    {&LoopCounters::conn_closed, &MetricsSnapshot::conn_closed},
    {&LoopCounters::conn_active, &MetricsSnapshot::conn_active},
    {&LoopCounters::tls_handshakes, &MetricsSnapshot::tls_handshakes},
    {&LoopCounters::http3_requests, &MetricsSnapshot::http3_requests},
    {&LoopCounters::quic_handshakes, &MetricsSnapshot::quic_handshakes},
    {&LoopCounters::quic_retries, &MetricsSnapshot::quic_retries},
    {&LoopCounters::quic_migrations, &MetricsSnapshot::quic_migrations},
    {&LoopCounters::quic_lost_packets, &MetricsSnapshot::quic_lost_packets},
    {&LoopCounters::file_cache_hits, &MetricsSnapshot::file_cache_hits},
    {&LoopCounters::file_cache_misses, &MetricsSnapshot::file_cache_misses},
    {&LoopCounters::upstream_connects, &MetricsSnapshot::upstream_connects},
    {&LoopCounters::upstream_reuses, &MetricsSnapshot::upstream_reuses},
    {&LoopCounters::upstream_errors, &MetricsSnapshot::upstream_errors},
    {&LoopCounters::php_connects, &MetricsSnapshot::php_connects},
    {&LoopCounters::php_reuses, &MetricsSnapshot::php_reuses},
    {&LoopCounters::php_errors, &MetricsSnapshot::php_errors},
    {&LoopCounters::php_waits, &MetricsSnapshot::php_waits},
    {&LoopCounters::php_wait_us, &MetricsSnapshot::php_wait_us},
    {&LoopCounters::cpu_us, &MetricsSnapshot::cpu_us},
    {&LoopCounters::rss_bytes, &MetricsSnapshot::rss_bytes},
    {&LoopCounters::latency_sum_us, &MetricsSnapshot::latency_sum_us},
};

}  // namespace

void LoopCounters::countRequest(uint16_t status, common::metrics::Action action,
                                uint64_t us) noexcept {
#ifdef SCALWS_METRICS_OFF
  (void)status, (void)action, (void)us;
  return;
#endif
  size_t cls = status >= 100 && status < 600 ? status / 100 - 1 : 4;
  requests_by_class[cls].add();
  requests_by_action[static_cast<size_t>(action)].add();
  latency_sum_us.add(us);
  latency[common::metrics::latencyBucket(us)].add();
}

void LoopCounters::addTo(MetricsSnapshot& out) const {
  for (size_t i = 0; i < requests_by_class.size(); ++i) {
    out.requests_by_class[i] += requests_by_class[i].value();
  }
  for (size_t i = 0; i < requests_by_action.size(); ++i) {
    out.requests_by_action[i] += requests_by_action[i].value();
  }
  for (const Pair& p : kPairs) out.*p.field += (this->*p.counter).value();
  for (size_t i = 0; i < latency.size(); ++i) out.latency[i] += latency[i].value();
}

void LoopCounters::reset() noexcept {
  for (auto& c : requests_by_class) c.set(0);
  for (auto& c : requests_by_action) c.set(0);
  for (const Pair& p : kPairs) (this->*p.counter).set(0);
  for (auto& c : latency) c.set(0);
}

}  // namespace scalws::worker
