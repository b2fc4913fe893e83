#include "controller/metrics/metrics_instance.h"

namespace scalws::controller {

using common::metrics::countersWentBack;
using common::metrics::foldEnded;
using common::metrics::metricsIncrease;

InstanceMetrics::InstanceMetrics(int64_t created_ms, int64_t open_bucket_ms) {
  recent_.push_back({created_ms, MetricsSnapshot()});
  boundaries_.push_back({open_bucket_ms, MetricsSnapshot()});
}

void InstanceMetrics::onSnapshot(int64_t pid, bool fresh, const MetricsSnapshot& s,
                                 int64_t now_ms) {
  last_snapshot_ms_ = now_ms;
  auto it = workers_.find(pid);
  if (it == workers_.end()) {
    Worker w;
    w.last = s;
    if (!fresh) w.offset = s;
    workers_.emplace(pid, w);
    return;
  }
  Worker& w = it->second;
  if (countersWentBack(s, w.last)) {
    // The same pid counting from scratch: a new process as far as the totals go.
    foldEnded(base_, metricsIncrease(w.last, w.offset));
    w.offset = MetricsSnapshot();
  }
  w.last = s;
}

void InstanceMetrics::onExit(int64_t pid) {
  auto it = workers_.find(pid);
  if (it == workers_.end()) return;
  foldEnded(base_, metricsIncrease(it->second.last, it->second.offset));
  workers_.erase(it);
}

MetricsSnapshot InstanceMetrics::total() const {
  MetricsSnapshot t = base_;
  for (const auto& [pid, w] : workers_) t.add(metricsIncrease(w.last, w.offset));
  return t;
}

void InstanceMetrics::sample(int64_t now_ms) {
  recent_.push_back({now_ms, total()});
  while (recent_.size() > kRecentSamples) recent_.pop_front();
}

MetricsSnapshot InstanceMetrics::closeBucket(int64_t boundary_ms) {
  MetricsSnapshot now = total();
  MetricsSnapshot increase = metricsIncrease(now, boundaries_.back().total);
  boundaries_.push_back({boundary_ms, now});
  while (boundaries_.size() > kBoundarySamples) boundaries_.pop_front();
  return increase;
}

const InstanceMetrics::Sample& InstanceMetrics::recentBase(int64_t now_ms, int64_t span_ms) const {
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) {
    if (it->time_ms <= now_ms - span_ms) return *it;
  }
  return recent_.front();
}

const InstanceMetrics::Sample& InstanceMetrics::windowBase(int64_t start_ms, bool* covered) const {
  for (auto it = boundaries_.rbegin(); it != boundaries_.rend(); ++it) {
    if (it->time_ms <= start_ms) {
      *covered = true;
      return *it;
    }
  }
  *covered = false;
  return boundaries_.front();
}

}  // namespace scalws::controller
