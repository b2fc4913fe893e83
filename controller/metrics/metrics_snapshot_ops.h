// Arithmetic on MetricsSnapshot for the controller's collector: the increase
// between two totals, folding a process that ended into a per-instance base, and the
// conversion to and from the store's MetricsRow.
//
// A snapshot holds monotonic counters plus two gauges (conn_active, rss_bytes). Counters
// subtract and add; gauges are taken from the newer side and are never summed over time.
#pragma once

#include <cstdint>
#include <string>

#include "common/metrics/metrics_snapshot.h"
#include "controller/state/metrics_row.h"

namespace scalws::controller {

using common::metrics::MetricsSnapshot;

// Counters: now - before (0 where before is larger, so never negative); gauges from now.
MetricsSnapshot metricsIncrease(const MetricsSnapshot& now, const MetricsSnapshot& before);

// Adds the counters of `from` into `into`; the gauges of `into` stay as they are.
void addCounters(MetricsSnapshot& into, const MetricsSnapshot& from);

// Adds the figures of a process that ended into `base`, as MetricsArea::retire does in a
// standalone site: its counters stay counted, its open connections count as closed, its
// gauges are dropped (a dead process holds no connection and no memory).
void foldEnded(MetricsSnapshot& base, const MetricsSnapshot& last);

// True when any counter of `now` is below the same counter of `before`: the figures come
// from a process that started over.
bool countersWentBack(const MetricsSnapshot& now, const MetricsSnapshot& before);

// Every counter and gauge zero.
bool isZero(const MetricsSnapshot& s);

// The store's shape: histogram trimmed of trailing empty buckets.
state::MetricsRow toMetricsRow(const std::string& instance, int64_t bucket_ms,
                               const MetricsSnapshot& s);
// Back; histogram buckets beyond the snapshot's layout are added to its last bucket.
MetricsSnapshot fromMetricsRow(const state::MetricsRow& row);

}  // namespace scalws::controller
