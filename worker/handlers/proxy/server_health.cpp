#include "worker/handlers/proxy/server_health.h"

namespace scalws::worker::proxy {

bool ServerHealth::available(const HealthPolicy& policy, uint64_t now_ms) const {
  if (state_ == State::kUp) return true;
  return !policy.active_checks && now_ms >= retry_at_ms_;
}

void ServerHealth::onChosen(const HealthPolicy& policy, uint64_t now_ms) {
  if (state_ == State::kDown) retry_at_ms_ = now_ms + policy.fail_timeout_ms;
}

bool ServerHealth::onSuccess(const HealthPolicy& policy) {
  fails_ = 0;
  window_start_ms_ = 0;
  if (state_ == State::kDown && !policy.active_checks) {
    state_ = State::kUp;
    return true;
  }
  return false;
}

bool ServerHealth::onFailure(const HealthPolicy& policy, uint64_t now_ms) {
  if (state_ == State::kDown) {
    // A failed trial: the next one waits a whole fail_timeout again.
    retry_at_ms_ = now_ms + policy.fail_timeout_ms;
    return false;
  }
  if (policy.max_fails == 0) return false;
  if (window_start_ms_ == 0 || now_ms - window_start_ms_ > policy.fail_timeout_ms) {
    window_start_ms_ = now_ms;
    fails_ = 0;
  }
  if (++fails_ < policy.max_fails) return false;
  markDown(policy, now_ms);
  return true;
}

bool ServerHealth::onProbe(const HealthPolicy& policy, bool passed, uint64_t now_ms) {
  if (passed) {
    probe_fails_ = 0;
    ++probe_passes_;
    if (state_ == State::kDown && probe_passes_ >= policy.probe_passes) {
      state_ = State::kUp;
      fails_ = 0;
      window_start_ms_ = 0;
      return true;
    }
    return false;
  }
  probe_passes_ = 0;
  ++probe_fails_;
  if (state_ == State::kUp && probe_fails_ >= policy.probe_fails) {
    markDown(policy, now_ms);
    fails_ = probe_fails_;
    return true;
  }
  return false;
}

void ServerHealth::markDown(const HealthPolicy& policy, uint64_t now_ms) {
  state_ = State::kDown;
  down_since_ms_ = now_ms;
  retry_at_ms_ = now_ms + policy.fail_timeout_ms;
  probe_passes_ = 0;
}

}  // namespace scalws::worker::proxy
