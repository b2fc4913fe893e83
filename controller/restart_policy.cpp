#include "controller/restart_policy.h"

#include <algorithm>

namespace scalws::controller {

RestartPolicy::Decision RestartPolicy::onCrash(uint32_t slot, uint64_t now_ms, uint64_t uptime_ms) {
  while (!crash_times_.empty() && now_ms - crash_times_.front() >= limits_.crash_window_ms) {
    crash_times_.pop_front();
  }
  crash_times_.push_back(now_ms);

  uint32_t& n = consecutive_[slot];
  n = uptime_ms >= limits_.stable_after_ms ? 1 : n + 1;
  uint64_t delay = limits_.first_backoff_ms;
  for (uint32_t i = 1; i < n && delay < limits_.max_backoff_ms; ++i) delay *= 2;

  Decision d;
  d.crashes_in_window = static_cast<uint32_t>(crash_times_.size());
  d.give_up = d.crashes_in_window >= limits_.crash_limit;
  d.delay_ms = std::min(delay, limits_.max_backoff_ms);
  return d;
}

void RestartPolicy::reset() {
  consecutive_.clear();
  crash_times_.clear();
}

}  // namespace scalws::controller
