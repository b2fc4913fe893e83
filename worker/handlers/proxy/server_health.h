// Whether one server takes requests, as one loop sees it.
//
// Passive (max_fails > 0): `max_fails` failures (connect refused or timed out, an error or
// timeout before a complete head, a malformed answer) within `fail_timeout` mark it down.
// Without active checks a down server gets one trial request every `fail_timeout`; the
// trial's success brings it back. With active checks (upstream.health) only probes bring a
// server back: `passes` consecutive passed probes; `fails` consecutive failed ones take it
// down as passive failures do.
//
// Plain logic on a clock the caller passes in (milliseconds), so it is tested without a
// loop. Every transition returns true so the caller can log it once.
#pragma once

#include <cstdint>

namespace scalws::worker::proxy {

struct HealthPolicy {
  uint32_t max_fails = 3;
  uint64_t fail_timeout_ms = 10'000;
  bool active_checks = false;
  uint32_t probe_fails = 3;
  uint32_t probe_passes = 2;
};

class ServerHealth {
 public:
  enum class State { kUp, kDown };

  State state() const { return state_; }
  uint64_t downSinceMs() const { return down_since_ms_; }
  // Failures counted in the current window (passive) or in a row (probes).
  uint32_t failures() const { return fails_; }

  // May the balancer choose it now? A down server's passive trial is due.
  bool available(const HealthPolicy& policy, uint64_t now_ms) const;
  // The balancer chose it: a trial of a down server holds off the next one.
  void onChosen(const HealthPolicy& policy, uint64_t now_ms);
  // A request completed (a valid answer, whatever its status). True: it came back up.
  bool onSuccess(const HealthPolicy& policy);
  // A request failed at this server. True: it went down now.
  bool onFailure(const HealthPolicy& policy, uint64_t now_ms);
  // An active probe's result. True: the state changed.
  bool onProbe(const HealthPolicy& policy, bool passed, uint64_t now_ms);

 private:
  void markDown(const HealthPolicy& policy, uint64_t now_ms);

  State state_ = State::kUp;
  uint32_t fails_ = 0;
  uint64_t window_start_ms_ = 0;
  uint64_t down_since_ms_ = 0;
  uint64_t retry_at_ms_ = 0;
  uint32_t probe_fails_ = 0;
  uint32_t probe_passes_ = 0;
};

}  // namespace scalws::worker::proxy
