// MetricsCollector: the controller's side of per-instance metrics. Workers' `metrics` notifications
// come in through the supervisors (workerSnapshot, workerExited); the controller's one-second timer
// calls tick(), which samples every instance and, at each 10 s boundary of the wall clock, writes
// one metrics_10s row per instance (the increase over those 10 s, gauges at the end), at each
// minute boundary one metrics_1m row per stored instance with 10 s rows in that minute (merged with
// mergeMetrics, read back from the DB so a controller restart mid-minute loses nothing already
// written; the first tick also rolls up the minutes that ended while no controller ran, up to
// kMinuteCatchUp), and every prune_every_ms prunes the DB (the store's retention: 10 s rows a day,
// 1 min rows a month).
//
// Reads: recent() (rates "now", from memory), window() (a span back from now: memory for
// the last minutes, the DB's rows beyond), totals() (monotonic, for Prometheus).
//
// Time comes from `clock` (Unix ms) so tests drive it. Single-threaded: the controller's
// loop. DB errors are logged and skipped: metrics never stop the controller.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/metrics/upstream_metrics.h"
#include "common/status.h"
#include "controller/metrics/metrics_instance.h"
#include "controller/state/state_store.h"

namespace scalws::controller {

class MetricsCollector {
 public:
  using Clock = std::function<int64_t()>;  // Unix ms

  static constexpr int64_t kBucketMs = 10'000;
  static constexpr int64_t kMinuteMs = 60'000;
  static constexpr int64_t kRecentSpanMs = 10'000;  // what "now" measures over
  static constexpr int64_t kMinuteCatchUp = 10;     // minutes rolled up late at most

  struct Options {
    Clock clock;  // empty: the system clock
    state::Retention retention;
    int64_t prune_every_ms = 10 * 60'000;
  };

  // The figures over a span: counters are increases, gauges are as of to_ms.
  struct Window {
    MetricsSnapshot figures;
    int64_t from_ms = 0;
    int64_t to_ms = 0;
    bool known = false;  // false: no figure was ever received for the instance
  };

  MetricsCollector(state::StateStore& store, Options options);

  // From the supervisors. `fresh`: the worker was spawned by this controller.
  void workerSnapshot(const std::string& instance, int64_t pid, bool fresh,
                      const MetricsSnapshot& s);
  void workerExited(const std::string& instance, int64_t pid);
  // A worker's proxy figures (common/metrics/upstream_metrics.h), sent with its snapshot:
  // the last ones of each live worker are kept, replacing the previous.
  void workerUpstreams(const std::string& instance, int64_t pid,
                       std::vector<common::metrics::UpstreamMetrics> upstreams);
  // The instance was removed: its figures go (its rows went with it in the DB).
  void forget(const std::string& instance);

  // Once a second.
  void tick();

  int64_t now() const { return clock_(); }
  // Over about the last kRecentSpanMs.
  Window recent(const std::string& instance) const;
  // Over [now - span_ms, now]; from the DB where memory does not reach back.
  common::Result<Window> window(const std::string& instance, int64_t span_ms);
  // Monotonic totals of every instance with figures, by name.
  std::vector<std::pair<std::string, MetricsSnapshot>> totals() const;
  size_t liveWorkers(const std::string& instance) const;
  // The proxy's upstreams as the live workers see them now (summed over them): the health
  // and in-flight gauges for `instance show`, and their counters since those workers started.
  std::vector<common::metrics::UpstreamMetrics> upstreamsNow(const std::string& instance) const;
  // For Prometheus: the counters of upstreamsNow plus those of the workers that ended under
  // this controller, so a worker's exit does not take its counts back. A server removed
  // by a reload stays in the totals with its last counts (gauges zero).
  std::vector<common::metrics::UpstreamMetrics> upstreamTotals(const std::string& instance) const;

 private:
  void rollUp10s(int64_t boundary_ms);
  // 1 min rows for every minute ending in (after_ms, up_to_ms].
  void rollUpMinutes(int64_t after_ms, int64_t up_to_ms);
  common::Result<MetricsSnapshot> fromRows(const std::string& instance, int64_t from_ms,
                                           int64_t to_ms, bool minutes);

  state::StateStore& store_;
  Clock clock_;
  state::Retention retention_;
  int64_t prune_every_ms_;
  std::map<std::string, InstanceMetrics> instances_;
  struct InstanceUpstreams {
    std::map<int64_t, std::vector<common::metrics::UpstreamMetrics>> live;  // by worker pid
    std::vector<common::metrics::UpstreamMetrics> ended;  // counters of ended workers
  };
  std::map<std::string, InstanceUpstreams> upstreams_;
  int64_t last_boundary_ms_ = 0;
  int64_t minutes_done_ms_ = 0;  // the end of the last minute rolled up
  int64_t last_prune_ms_ = 0;
  bool store_failing_ = false;  // log a failing DB once, not every 10 s
};

}  // namespace scalws::controller
