// InstanceMetrics: what the controller knows of one instance's figures, kept in
// memory by the MetricsCollector. Pure arithmetic: no clock, no I/O; times are passed in.
//
// Totals. Every worker process sends monotonic totals since it started. The instance's
// total is a base (the last figures of its processes that ended) plus, for each live
// process, its last figures minus its offset:
//   - a worker spawned under this controller started at zero: offset zero, all of it counts;
//   - a worker re-attached after a controller restart counted before we knew it: its first
//     figures are its offset, so that history is not reported as news;
//   - a process that ends (onExit), or whose counters go backwards (it started over), is
//     folded into the base (foldEnded): totals never go backwards.
// Gauges (active connections, RSS) are the sum over live processes.
//
// History. sample() keeps the total once a second (the last kRecentSamples, for rates
// "now"); closeBucket() keeps it at each 10 s boundary (the last kBoundarySamples, enough
// for a 5 minute window) and returns the increase since the previous boundary. The first
// entry of the boundary history is a zero total at the start of the bucket the collector
// closes next (the instance may be first seen after a boundary whose tick has not run yet:
// that bucket's row holds what was counted since, so the history must start before it, or
// a window would count it from memory and again from the DB). The first per-second sample
// is a zero total at creation. Both hold until they age out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>

#include "common/metrics/metrics_snapshot.h"

namespace scalws::controller {

using common::metrics::MetricsSnapshot;

class InstanceMetrics {
 public:
  static constexpr size_t kRecentSamples = 16;    // 1 s apart
  static constexpr size_t kBoundarySamples = 40;  // 10 s apart: 6 min 30 s

  struct Sample {
    int64_t time_ms = 0;
    MetricsSnapshot total;
  };

  // `open_bucket_ms`: the start of the 10 s bucket the next closeBucket() closes (at most
  // created_ms).
  InstanceMetrics(int64_t created_ms, int64_t open_bucket_ms);

  // A worker process's figures. `fresh`: spawned under this controller (counted from zero);
  // otherwise its first figures are a baseline.
  void onSnapshot(int64_t pid, bool fresh, const MetricsSnapshot& s, int64_t now_ms);
  // The process is gone: its last figures join the base. Unknown pids are ignored.
  void onExit(int64_t pid);

  MetricsSnapshot total() const;
  size_t liveWorkers() const { return workers_.size(); }
  int64_t lastSnapshotMs() const { return last_snapshot_ms_; }

  // Once a second.
  void sample(int64_t now_ms);
  // At the 10 s boundary `boundary_ms`: the increase since the previous boundary (or since
  // creation), counters only growing; gauges as they are now.
  MetricsSnapshot closeBucket(int64_t boundary_ms);

  // The per-second sample to measure "now" against: the newest taken at or before
  // now_ms - span_ms, else the oldest kept (or the creation sample).
  const Sample& recentBase(int64_t now_ms, int64_t span_ms) const;
  // The boundary sample to measure a window starting at start_ms against: the newest at or
  // before start_ms, else the oldest kept. `covered` says whether memory reaches back to
  // start_ms; when it does not, what lies before the returned sample is in the DB (rows
  // with bucket_ms below floor10(sample.time_ms)).
  const Sample& windowBase(int64_t start_ms, bool* covered) const;

 private:
  struct Worker {
    MetricsSnapshot last;
    MetricsSnapshot offset;
  };

  MetricsSnapshot base_;
  std::map<int64_t, Worker> workers_;
  std::deque<Sample> recent_;      // oldest first
  std::deque<Sample> boundaries_;  // oldest first; may start with the origin sample
  int64_t last_snapshot_ms_ = 0;
};

}  // namespace scalws::controller
