// One event loop's counters: written only by that loop, with no lock and no
// locked instruction (RelaxedCounter); read by the status page and the metrics sender
// from any thread — or any process, when the block lives in a MetricsArea.
#pragma once

#include <array>

#include "common/metrics/metrics_snapshot.h"
#include "common/metrics/relaxed_counter.h"

namespace scalws::worker {

using common::metrics::RelaxedCounter;

// One RelaxedCounter per figure of metrics_fields.h, members named as in MetricsSnapshot.
// The process gauges (cpu_us, rss_bytes) are refreshed about once a second by one loop of
// the process.
struct LoopCounters {
#define SCALWS_LABELLED_COUNTERS(member, labels, ...) \
  std::array<RelaxedCounter, std::size(common::metrics::labels)> member;
  SCALWS_METRICS_LABELLED(SCALWS_LABELLED_COUNTERS)
#undef SCALWS_LABELLED_COUNTERS
#define SCALWS_SCALAR_COUNTER(member, ...) RelaxedCounter member;
  SCALWS_METRICS_SCALARS(SCALWS_SCALAR_COUNTER)
#undef SCALWS_SCALAR_COUNTER
  std::array<RelaxedCounter, common::metrics::kLatencyBuckets> latency;

  // One answered request: its status, the action that answered and its duration.
  void countRequest(uint16_t status, common::metrics::Action action, uint64_t us) noexcept;
  // Adds this block's values into `out`.
  void addTo(common::metrics::MetricsSnapshot& out) const;
  // Adds `s` into this block (the retired total of a standalone site).
  void add(const common::metrics::MetricsSnapshot& s) noexcept;
  void reset() noexcept;
};

}  // namespace scalws::worker
