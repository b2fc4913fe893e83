// Where a site's loop counters live. Standalone, the parent maps the area shared before it
// forks, so every worker process writes its own slot and the status page of any worker
// sums them all; a slot whose process died is folded into a "retired" total by the parent
// before the replacement starts, so totals never go backwards. Under the controller each
// worker process has a private area and sends its sum over IPC.
#pragma once

#include <cstddef>
#include <memory>

#include "common/metrics/metrics_snapshot.h"
#include "common/status.h"
#include "worker/metrics/loop_counters.h"

namespace scalws::worker {

class MetricsArea {
 public:
  // `slots`: one per loop of the site (multi: per worker process; single: per loop). With
  // `claim_all` false no slot is ready until claim(): a large area for the slots reloads
  // may need then costs address space, not memory (the pages stay untouched).
  static common::Result<std::unique_ptr<MetricsArea>> create(size_t slots, bool claim_all = true);
  ~MetricsArea();
  MetricsArea(const MetricsArea&) = delete;
  MetricsArea& operator=(const MetricsArea&) = delete;

  size_t slots() const { return slots_; }
  LoopCounters* slot(size_t i);
  // Zeroes slot i for a new user and counts it in total() from now on (the parent, before
  // the fork that hands it out).
  void claim(size_t i);
  // Folds slot i into the retired total and zeroes it (the parent, once its process died).
  void retire(size_t i);
  common::metrics::MetricsSnapshot total() const;

 private:
  struct Layout;
  MetricsArea(Layout* layout, size_t slots, size_t bytes)
      : layout_(layout), slots_(slots), bytes_(bytes) {}
  Layout* layout_;
  size_t slots_;
  size_t bytes_;
};

}  // namespace scalws::worker
