// RestartPolicy: what the supervisor does when a worker exits without being asked to.
// Pure: time comes in as arguments, so tests use a fake clock.
//
// - Backoff per slot: the n-th consecutive crash of a slot waits first_backoff * 2^(n-1),
//   at most max_backoff (100 ms doubling to 30 s). A worker that ran for stable_after or
//   longer before it died starts a fresh sequence (its crash is the first again).
// - Crash loop per instance: the crash_limit-th unexpected exit within crash_window gives
//   up; the supervisor then stops the instance and marks it `failed` with the reason.
#pragma once

#include <cstdint>
#include <deque>
#include <map>

namespace scalws::controller {

struct RestartLimits {
  uint64_t first_backoff_ms = 100;
  uint64_t max_backoff_ms = 30'000;
  uint64_t stable_after_ms = 10'000;
  uint32_t crash_limit = 10;
  uint64_t crash_window_ms = 600'000;
};

class RestartPolicy {
 public:
  struct Decision {
    bool give_up = false;
    uint64_t delay_ms = 0;           // when !give_up: restart after this long
    uint32_t crashes_in_window = 0;  // including this one
  };

  explicit RestartPolicy(RestartLimits limits = RestartLimits()) : limits_(limits) {}

  // A worker of `slot` that had run `uptime_ms` exited unexpectedly at `now_ms`.
  Decision onCrash(uint32_t slot, uint64_t now_ms, uint64_t uptime_ms);
  // An operator (re)started the instance: forget every crash.
  void reset();

  const RestartLimits& limits() const { return limits_; }

 private:
  RestartLimits limits_;
  std::map<uint32_t, uint32_t> consecutive_;  // slot -> crashes in its current sequence
  std::deque<uint64_t> crash_times_;          // within the window, oldest first
};

}  // namespace scalws::controller
