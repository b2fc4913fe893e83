// InstanceSupervisor: what happens to workers once they run — crashes and restarts, and
// leaving them to the next controller. Operations (start, stop, reload) are in
// instance_supervisor.cpp, taking over a previous controller's workers in
// instance_supervisor_attach.cpp.
#include <algorithm>

#include "common/log.h"
#include "controller/instances/instance_config.h"
#include "controller/instances/instance_supervisor.h"
#include "controller/shared/shared_listeners.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;

// --- running -----------------------------------------------------------------------------

InstanceSupervisor::Slot* InstanceSupervisor::slotOf(const WorkerProcess& worker) {
  for (Slot& s : slots_) {
    if (s.worker.get() == &worker) return &s;
  }
  return nullptr;
}

void InstanceSupervisor::onWorkerExit(WorkerProcess& worker, const std::string& how) {
  Status forgotten = env_.store->forgetWorker(worker.pid());
  (void)forgotten;  // a stale row is verified against /proc before anyone trusts it
  Slot* slot = slotOf(worker);
  if (slot == nullptr) {
    auto it = std::find_if(retired_.begin(), retired_.end(),
                           [&](const auto& w) { return w.get() == &worker; });
    if (it != retired_.end()) {
      bury(std::move(*it));
      retired_.erase(it);
    }
    if (state_ == State::kStopping) maybeFinishStop();
    if (attach_done_) maybeFinishAttach();
    return;
  }
  uint64_t now = uv_now(env_.loop);
  uint64_t uptime = now - std::min(now, worker.startedMonoMs());
  uint32_t index = slot->index;
  pid_t pid = worker.pid();
  bury(std::move(slot->worker));
  // Its channels leave the fronts' tables; what waits in them goes to its siblings.
  if (env_.shared != nullptr && !shared_listens_.empty()) {
    env_.shared->workerDown(record_.name, index);
  }

  if (state_ == State::kStopping) return maybeFinishStop();
  if (state_ == State::kStarting) {
    return startFailed("worker " + std::to_string(index) + " (pid " + std::to_string(pid) + ") " +
                       how);
  }
  if (state_ != State::kRunning) return;
  RestartPolicy::Decision d = policy_.onCrash(index, now, uptime);
  std::string what =
      "worker " + std::to_string(index) + " (pid " + std::to_string(pid) + ") " + how;
  if (d.give_up) {
    event(state::kEventWorkerExited, what + "; giving up");
    return crashLoop(what + ": " + std::to_string(d.crashes_in_window) + " crashes within " +
                     std::to_string(policy_.limits().crash_window_ms / 1000) + " s");
  }
  LOG_ERROR("instance %s: %s; restarting in %llu ms", record_.name.c_str(), what.c_str(),
            static_cast<unsigned long long>(d.delay_ms));
  event(state::kEventWorkerExited, what + "; restarting in " + std::to_string(d.delay_ms) + " ms");
  scheduleRespawn(*slot, d.delay_ms);
}

void InstanceSupervisor::scheduleRespawn(Slot& slot, uint64_t delay_ms) {
  cancelRespawn(slot);
  slot.restart_timer = std::make_unique<LoopTimer>(env_.loop);
  slot.restart_at_ms = uv_now(env_.loop) + delay_ms;
  // Found again by index when it fires: slots_ keeps its size while the instance runs.
  uint32_t index = slot.index;
  slot.restart_timer->start(delay_ms, 0, [this, index] { respawn(index); });
}

void InstanceSupervisor::respawn(uint32_t index) {
  if (index >= slots_.size()) return;
  Slot& slot = slots_[index];
  cancelRespawn(slot);
  if (state_ != State::kRunning || slot.worker) return;
  ++slot.restarts;
  Status spawned = spawnSlot(slot);
  if (spawned.ok()) return;
  LOG_ERROR("instance %s: cannot restart worker %u: %s", record_.name.c_str(), index,
            spawned.message().c_str());
  RestartPolicy::Decision d = policy_.onCrash(index, uv_now(env_.loop), 0);
  if (d.give_up)
    return crashLoop("cannot restart worker " + std::to_string(index) + ": " + spawned.message());
  scheduleRespawn(slot, d.delay_ms);
}

void InstanceSupervisor::cancelRespawn(Slot& slot) {
  slot.restart_timer.reset();
  slot.restart_at_ms = 0;
}

void InstanceSupervisor::crashLoop(const std::string& reason) {
  LOG_ERROR("instance %s: crash loop, marking it failed: %s", record_.name.c_str(), reason.c_str());
  doStop([](const Status&) {}, State::kFailed, reason);
}

// --- leaving -----------------------------------------------------------------------------

void InstanceSupervisor::leave() {
  for (Slot& slot : slots_) {
    cancelRespawn(slot);
    if (slot.worker) slot.worker->detach();
  }
  for (auto& w : retired_) w->detach();
  for (auto& w : attaching_) w->detach();
}

}  // namespace scalws::controller
