// InstanceSupervisor: taking over the workers a previous controller left (re-attach).
//
// Nothing a worker says is taken on trust: what it runs is taken from the DB (the
// `launches` row: the config, path and pools its instance's workers were last told) and
// the worker is kept only when three digests agree (launch_digest.h): the one its row holds
// (what it was told), the one of what the DB says a worker of its slot is told, and the one
// of what it reports in its attach hello. Any other worker is killed at once (it is hostile
// or stale either way, and its slot is better served by a replacement started from the DB)
// and the take-over ends only once such workers are gone, so a start that follows finds
// their addresses free.
#include <algorithm>

#include "common/log.h"
#include "controller/instances/instance_config.h"
#include "controller/instances/instance_supervisor.h"
#include "controller/instances/launch_digest.h"
#include "controller/shared/shared_listeners.h"

namespace scalws::controller {

using common::Result;
using common::Status;

void InstanceSupervisor::reattach(const std::vector<state::WorkerRecord>& rows, Done done) {
  enqueue(
      [this, rows](Done finish) {
        for (const state::WorkerRecord& row : rows) {
          Result<std::unique_ptr<WorkerProcess>> w =
              WorkerProcess::attach(env_.loop, row, callbacks());
          if (!w.ok()) {
            LOG_INFO("instance %s: worker pid %lld not re-attached: %s", record_.name.c_str(),
                     static_cast<long long>(row.pid), w.status().message().c_str());
            Status forgotten = env_.store->forgetWorker(row.pid);
            (void)forgotten;
            continue;
          }
          attaching_.push_back(std::move(w).value());
        }
        attach_done_ = std::move(finish);
        adopted_ = false;
        maybeFinishAttach();
      },
      std::move(done));
}

void InstanceSupervisor::onAttachReady(WorkerProcess& worker, const Status& status) {
  auto it = std::find_if(attaching_.begin(), attaching_.end(),
                         [&](const auto& w) { return w.get() == &worker; });
  if (it == attaching_.end()) return;
  std::unique_ptr<WorkerProcess> w = std::move(*it);
  attaching_.erase(it);
  if (status.ok()) {
    attached_.push_back(std::move(w));
  } else {
    LOG_WARN("instance %s: worker pid %d did not re-attach (%s); stopping it", record_.name.c_str(),
             static_cast<int>(w->pid()), status.message().c_str());
    w->stop(killAfterMs());
    retired_.push_back(std::move(w));
  }
  maybeFinishAttach();
}

void InstanceSupervisor::maybeFinishAttach() {
  if (!attaching_.empty() || !attach_done_) return;
  if (!adopted_) {
    adopted_ = true;
    adopt(std::move(attached_));
    attached_.clear();
  }
  if (!retired_.empty()) return;  // onWorkerExit calls back once they are gone
  std::exchange(attach_done_, nullptr)(common::okStatus());
}

std::optional<ipc::ReloadArgs> InstanceSupervisor::storedLaunch() {
  Result<std::optional<state::LaunchRecord>> launch = env_.store->getLaunch(record_.name);
  if (!launch.ok()) {
    LOG_ERROR("instance %s: cannot read what its workers were told: %s", record_.name.c_str(),
              launch.status().message().c_str());
    return std::nullopt;
  }
  if (!*launch) return std::nullopt;
  return ipc::ReloadArgs{(*launch)->config, (*launch)->config_path, (*launch)->php_pools,
                         (*launch)->apps};
}

std::string InstanceSupervisor::refusal(const WorkerProcess& w, const std::vector<Slot>& slots,
                                        bool have_launch) const {
  uint32_t index = w.slot();
  if (index >= slots.size() || slots[index].worker) return "it fits no slot";
  if (w.attachedState().stopping) return "it is stopping";
  if (!have_launch) return "this controller has no record of what it was told";
  const std::string& recorded = w.recordedDigest();
  if (recorded.empty() || launchDigest(settingsFor(slots[index])) != recorded) {
    return "what it was told is not what the state DB says it is told";
  }
  if (launchDigest(w.attachedState().settings) != recorded) {
    return "it reports a config the controller did not give it";
  }
  return "";
}

void InstanceSupervisor::adopt(std::vector<std::unique_ptr<WorkerProcess>> workers) {
  std::vector<Slot> slots = layout();
  for (size_t i = 0; i < slots.size(); ++i) slots[i].index = static_cast<uint32_t>(i);
  std::optional<ipc::ReloadArgs> launch = storedLaunch();
  std::optional<common::config::SiteConfig> site;
  if (launch) {
    Result<common::config::SiteConfig> loaded =
        loadInstanceConfig(launch->config, launch->config_path);
    if (loaded.ok()) site = std::move(loaded).value();
    if (!loaded.ok()) launch.reset();
    if (launch) running_ = *launch;  // settingsFor() reads it
  }
  InstanceCaches caches;  // the areas the workers kept share, from the first one taken
  std::set<size_t> shared;
  if (site && env_.shared != nullptr) shared = env_.shared->sharedListens(record_.name, *site);
  std::vector<uint32_t> up;
  for (auto& w : workers) {
    std::string why = refusal(*w, slots, launch.has_value());
    if (why.empty() && site && (!site->caches.empty() || common::config::hasLimits(*site))) {
      // Its cache areas (and limit table) must be the ones this config makes, and the same
      // in every worker.
      Result<InstanceCaches> areas = w->cacheAreas(*site);
      if (!areas.ok()) {
        why = "its cache areas: " + areas.status().message();
      } else if (!caches.empty() && !caches.sameAreas(*areas)) {
        why = "its cache areas are not those of the instance's other workers";
      } else if (caches.empty()) {
        caches = std::move(areas).value();
      }
    }
    if (!why.empty()) {
      std::string what = "worker pid " + std::to_string(w->pid()) + " not taken over: " + why;
      LOG_WARN("instance %s: %s; killing it", record_.name.c_str(), what.c_str());
      event(state::kEventWorkerRefused, what);
      w->kill();
      retired_.push_back(std::move(w));
      continue;
    }
    Slot& slot = slots[w->slot()];
    SlotListeners listeners = w->takeAttachedListeners();
    // Copies of listeners it did not get from us are no use to a replacement.
    uint32_t first_steering = 0;  // the UDP sockets of the slots before it (bind order)
    for (uint32_t i = 0; i < slot.index; ++i) first_steering += slots[i].loops;
    if (slotListenerSpecs(*site, slot.loops, first_steering, shared) == listeners.specs) {
      slot.listeners = std::move(listeners);
    }
    if (!shared.empty()) {
      // Its channels, paired with the ends the fronts hold (by the kernel's word); a worker
      // whose channels cannot be paired is replaced, with new ones.
      Status adopted = slot.listeners.specs.empty()
                           ? common::notFound("its listeners could not be taken")
                           : env_.shared->adopt(record_.name, *site, slot.index, slot.listeners);
      if (!adopted.ok()) {
        std::string what =
            "worker pid " + std::to_string(w->pid()) +
            " not taken over: its channels to the shared address's fronts: " + adopted.message();
        LOG_WARN("instance %s: %s; killing it", record_.name.c_str(), what.c_str());
        event(state::kEventWorkerRefused, what);
        SlotListeners direct;
        for (size_t k = 0; k < slot.listeners.specs.size(); ++k) {
          if (slot.listeners.specs[k].handoff) continue;
          direct.specs.push_back(slot.listeners.specs[k]);
          direct.fds.push_back(std::move(slot.listeners.fds[k]));
        }
        slot.listeners = std::move(direct);
        w->kill();
        retired_.push_back(std::move(w));
        continue;
      }
      up.push_back(slot.index);
    }
    slot.attached = true;
    event(state::kEventWorkerAttached, "worker " + std::to_string(slot.index) + " (pid " +
                                           std::to_string(w->pid()) + ") re-attached");
    slot.worker = std::move(w);
  }
  bool any = false;
  for (Slot& slot : slots) any = any || slot.worker != nullptr;
  if (!any) {
    running_ = ipc::ReloadArgs();
    if (!shared.empty()) env_.shared->release(record_.name);
    return;
  }
  slots_ = std::move(slots);
  running_site_ = std::move(site);
  resources_.begin(std::move(caches));
  // The workers kept the access log they were given; this controller's files serve
  // their error lines, the workers it spawns and the next reopen-logs.
  if (running_site_) {
    Status logs = resources_.openLogs(*running_site_);
    if (!logs.ok()) {
      LOG_WARN("instance %s: %s", record_.name.c_str(), logs.message().c_str());
    }
  }
  shared_listens_ = std::move(shared);
  for (uint32_t index : up) env_.shared->workerUp(record_.name, index);
  state_ = State::kRunning;
  setStatus("running", "");
  LOG_INFO("instance %s: re-attached to its workers", record_.name.c_str());
  for (Slot& slot : slots_) {
    if (!slot.worker) scheduleRespawn(slot, 0);  // died, or was not ours: replaced from the DB
  }
}

}  // namespace scalws::controller
