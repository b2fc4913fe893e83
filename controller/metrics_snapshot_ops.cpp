#include "controller/metrics_snapshot_ops.h"

#include <algorithm>
#include <iterator>

namespace scalws::controller {

using common::metrics::kActionCount;
using common::metrics::kLatencyBuckets;
using state::MetricsRow;

namespace {

// A new field in MetricsSnapshot must be added to the tables below: this stops the build
// until it is (5 classes + 7 actions + 24 scalars + the histogram).
static_assert(sizeof(MetricsSnapshot) == (5 + kActionCount + 24 + kLatencyBuckets) * 8);

using Member = uint64_t MetricsSnapshot::*;

constexpr Member kCounters[] = {
    &MetricsSnapshot::bytes_in,          &MetricsSnapshot::bytes_out,
    &MetricsSnapshot::conn_accepted,     &MetricsSnapshot::conn_closed,
    &MetricsSnapshot::tls_handshakes,    &MetricsSnapshot::file_cache_hits,
    &MetricsSnapshot::file_cache_misses, &MetricsSnapshot::upstream_connects,
    &MetricsSnapshot::upstream_reuses,   &MetricsSnapshot::upstream_errors,
    &MetricsSnapshot::php_connects,      &MetricsSnapshot::php_reuses,
    &MetricsSnapshot::php_errors,        &MetricsSnapshot::php_waits,
    &MetricsSnapshot::php_wait_us,       &MetricsSnapshot::cpu_us,
    &MetricsSnapshot::latency_sum_us,    &MetricsSnapshot::http3_requests,
    &MetricsSnapshot::quic_handshakes,   &MetricsSnapshot::quic_retries,
    &MetricsSnapshot::quic_migrations,   &MetricsSnapshot::quic_lost_packets,
};
constexpr Member kGauges[] = {&MetricsSnapshot::conn_active, &MetricsSnapshot::rss_bytes};
static_assert(std::size(kCounters) + std::size(kGauges) == 24);

// The same scalar in both shapes.
struct RowPair {
  uint64_t MetricsRow::*row;
  Member snapshot;
};
constexpr RowPair kRowPairs[] = {
    {&MetricsRow::bytes_in, &MetricsSnapshot::bytes_in},
    {&MetricsRow::bytes_out, &MetricsSnapshot::bytes_out},
    {&MetricsRow::conn_accepted, &MetricsSnapshot::conn_accepted},
    {&MetricsRow::conn_closed, &MetricsSnapshot::conn_closed},
    {&MetricsRow::conn_active, &MetricsSnapshot::conn_active},
    {&MetricsRow::tls_handshakes, &MetricsSnapshot::tls_handshakes},
    {&MetricsRow::file_cache_hits, &MetricsSnapshot::file_cache_hits},
    {&MetricsRow::file_cache_misses, &MetricsSnapshot::file_cache_misses},
    {&MetricsRow::upstream_connects, &MetricsSnapshot::upstream_connects},
    {&MetricsRow::upstream_reuses, &MetricsSnapshot::upstream_reuses},
    {&MetricsRow::upstream_errors, &MetricsSnapshot::upstream_errors},
    {&MetricsRow::php_connects, &MetricsSnapshot::php_connects},
    {&MetricsRow::php_reuses, &MetricsSnapshot::php_reuses},
    {&MetricsRow::php_errors, &MetricsSnapshot::php_errors},
    {&MetricsRow::php_waits, &MetricsSnapshot::php_waits},
    {&MetricsRow::php_wait_us, &MetricsSnapshot::php_wait_us},
    {&MetricsRow::cpu_us, &MetricsSnapshot::cpu_us},
    {&MetricsRow::rss_bytes, &MetricsSnapshot::rss_bytes},
    {&MetricsRow::latency_sum_us, &MetricsSnapshot::latency_sum_us},
    {&MetricsRow::http3_requests, &MetricsSnapshot::http3_requests},
    {&MetricsRow::quic_handshakes, &MetricsSnapshot::quic_handshakes},
    {&MetricsRow::quic_retries, &MetricsSnapshot::quic_retries},
    {&MetricsRow::quic_migrations, &MetricsSnapshot::quic_migrations},
    {&MetricsRow::quic_lost_packets, &MetricsSnapshot::quic_lost_packets},
};
static_assert(std::size(kRowPairs) == 24);

uint64_t minus(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}

template <typename F>
void forEachCounterArray(F f) {
  f(&MetricsSnapshot::requests_by_class);
  f(&MetricsSnapshot::requests_by_action);
  f(&MetricsSnapshot::latency);
}

}  // namespace

MetricsSnapshot metricsIncrease(const MetricsSnapshot& now, const MetricsSnapshot& before) {
  MetricsSnapshot d;
  for (Member m : kCounters) d.*m = minus(now.*m, before.*m);
  for (Member m : kGauges) d.*m = now.*m;
  forEachCounterArray([&](auto member) {
    for (size_t i = 0; i < (d.*member).size(); ++i) {
      (d.*member)[i] = minus((now.*member)[i], (before.*member)[i]);
    }
  });
  return d;
}

void addCounters(MetricsSnapshot& into, const MetricsSnapshot& from) {
  for (Member m : kCounters) into.*m += from.*m;
  forEachCounterArray([&](auto member) {
    for (size_t i = 0; i < (into.*member).size(); ++i) (into.*member)[i] += (from.*member)[i];
  });
}

void foldEnded(MetricsSnapshot& base, const MetricsSnapshot& last) {
  addCounters(base, last);
  base.conn_closed += last.conn_active;
}

bool countersWentBack(const MetricsSnapshot& now, const MetricsSnapshot& before) {
  for (Member m : kCounters) {
    if (now.*m < before.*m) return true;
  }
  bool back = false;
  forEachCounterArray([&](auto member) {
    for (size_t i = 0; i < (now.*member).size(); ++i) {
      if ((now.*member)[i] < (before.*member)[i]) back = true;
    }
  });
  return back;
}

bool isZero(const MetricsSnapshot& s) {
  return s == MetricsSnapshot();
}

MetricsRow toMetricsRow(const std::string& instance, int64_t bucket_ms, const MetricsSnapshot& s) {
  MetricsRow row;
  row.instance = instance;
  row.bucket_ms = bucket_ms;
  row.requests_by_class = s.requests_by_class;
  row.requests_by_action = s.requests_by_action;
  for (const RowPair& p : kRowPairs) row.*p.row = s.*p.snapshot;
  size_t used = kLatencyBuckets;
  while (used > 0 && s.latency[used - 1] == 0) --used;
  row.latency_buckets.assign(s.latency.begin(), s.latency.begin() + static_cast<ptrdiff_t>(used));
  return row;
}

MetricsSnapshot fromMetricsRow(const MetricsRow& row) {
  MetricsSnapshot s;
  s.requests_by_class = row.requests_by_class;
  s.requests_by_action = row.requests_by_action;
  for (const RowPair& p : kRowPairs) s.*p.snapshot = row.*p.row;
  for (size_t i = 0; i < row.latency_buckets.size(); ++i) {
    s.latency[std::min(i, kLatencyBuckets - 1)] += row.latency_buckets[i];
  }
  return s;
}

}  // namespace scalws::controller
