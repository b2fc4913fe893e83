// InstanceSupervisor: its state, the queue of operations, stop, and what the others share.
// Start is in instance_supervisor_start.cpp, reload and the other operations on serving
// workers in instance_supervisor_serving.cpp, crashes and restarts in
// instance_supervisor_workers.cpp, re-attach in instance_supervisor_attach.cpp.
#include "controller/instances/instance_supervisor.h"

#include "common/log.h"
#include "controller/apps/app_binding.h"
#include "controller/deferred_call.h"
#include "controller/instances/instance_config.h"
#include "controller/instances/launch_digest.h"
#include "controller/instances/process_facts.h"
#include "controller/shared/shared_listeners.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using ipc::Json;

InstanceSupervisor::InstanceSupervisor(Env env, state::InstanceRecord record)
    : env_(std::move(env)),
      record_(std::move(record)),
      policy_(env_.limits),
      reaper_(env_.loop),
      resources_(env_.log_dir, record_.name) {}

InstanceSupervisor::~InstanceSupervisor() {
  *alive_ = false;
  for (Slot& slot : slots_) cancelRespawn(slot);
  slots_.clear();
  retired_.clear();
  graveyard_.clear();
}

std::string_view InstanceSupervisor::stateName() const {
  // In State's order.
  static constexpr std::string_view kNames[] = {"stopped", "starting", "running", "stopping",
                                                "failed"};
  return kNames[static_cast<size_t>(state_)];
}

bool InstanceSupervisor::runningConfigDiffers() const {
  return running_site_.has_value() && (running_.config != record_.config);
}

size_t InstanceSupervisor::liveProcesses() const {
  size_t n = retired_.size();
  for (const Slot& s : slots_) n += s.worker ? 1 : 0;
  return n + attaching_.size() + attached_.size();
}

Json InstanceSupervisor::processes() const {
  Json list = Json::array();
  auto describe = [](const WorkerProcess& w, const Slot* slot) {
    return Json{{"slot", w.slot()},
                {"pid", w.pid()},
                {"state", slot == nullptr ? "retiring" : std::string(w.stateName())},
                {"cpus", w.cpus().toString()},
                {"started_ms", w.startedMs()},
                {"restarts", slot == nullptr ? 0 : slot->restarts},
                {"attached", slot != nullptr && slot->attached},
                {"checked", processFacts(w.pid())},
                {"sandbox", w.sandbox() ? w.sandbox()->encode() : Json(nullptr)}};
  };
  for (const Slot& s : slots_) {
    if (s.worker) {
      list.push_back(describe(*s.worker, &s));
    } else if (s.restart_timer) {
      uint64_t now = uv_now(env_.loop);
      list.push_back({{"slot", s.index},
                      {"pid", 0},
                      {"state", "restarting"},
                      {"cpus", s.cpus.toString()},
                      {"restart_in_ms", s.restart_at_ms > now ? s.restart_at_ms - now : 0},
                      {"restarts", s.restarts},
                      {"attached", false}});
    }
  }
  for (const auto& w : retired_) list.push_back(describe(*w, nullptr));
  return list;
}

const std::optional<common::config::SiteConfig>& InstanceSupervisor::storedSite() const {
  if (!stored_site_) {
    Result<common::config::SiteConfig> site =
        loadInstanceConfig(record_.config, record_.config_path);
    stored_site_.emplace(site.ok() ? std::optional<common::config::SiteConfig>(std::move(*site))
                                   : std::nullopt);
  }
  return *stored_site_;
}

void InstanceSupervisor::pushSharedNames(const std::vector<ipc::SharedAddressNames>& names) {
  for (Slot& slot : slots_) {
    if (!slot.worker || slot.worker->state() != WorkerProcess::State::kReady) continue;
    slot.worker->sendSharedNames(names);
  }
}

// --- the operation queue -----------------------------------------------------------------

void InstanceSupervisor::enqueue(std::function<void(Done)> op, Done done) {
  queue_.emplace_back(std::move(op), std::move(done));
  if (op_running_) return;
  op_running_ = true;
  std::weak_ptr<bool> alive = alive_;
  deferCall(env_.loop, [this, alive] {
    if (!alive.expired()) runNext();
  });
}

void InstanceSupervisor::runNext() {
  if (queue_.empty()) {
    op_running_ = false;
    return;
  }
  op_running_ = true;
  auto [op, done] = std::move(queue_.front());
  queue_.pop_front();
  std::weak_ptr<bool> alive = alive_;
  op([this, alive, done = std::move(done)](const Status& status) {
    done(status);
    if (alive.expired()) return;
    deferCall(env_.loop, [this, alive] {
      if (!alive.expired()) runNext();
    });
  });
}

void InstanceSupervisor::start(Commit commit, Done done) {
  enqueue([this, commit = std::move(commit)](Done finish) { doStart(commit, std::move(finish)); },
          std::move(done));
}

void InstanceSupervisor::stop(Done done) {
  enqueue([this](Done finish) { doStop(std::move(finish), State::kStopped, ""); }, std::move(done));
}

void InstanceSupervisor::restart(Commit commit, Done done) {
  enqueue(
      [this, commit = std::move(commit)](Done finish) {
        doStop(
            [this, commit, finish](const Status& stopped) {
              if (!stopped.ok()) return finish(stopped);
              doStart(commit, finish);
            },
            State::kStopped, "");
      },
      std::move(done));
}

void InstanceSupervisor::reload(Done done) {
  enqueue([this](Done finish) { doReload(std::move(finish)); }, std::move(done));
}

// --- stop --------------------------------------------------------------------------------

uint64_t InstanceSupervisor::killAfterMs() const {
  const auto& server = common::config::serverOrDefaults(
      running_site_ ? *running_site_ : common::config::SiteConfig());
  return server.shutdown_timeout + kKillGraceMs;
}

void InstanceSupervisor::doStop(Done done, State target, const std::string& reason) {
  if (state_ == State::kStopping) {
    // A crash-loop stop is under way; this stop waits for it and then says stopped.
    stop_target_ = target;
    stop_reason_ = reason;
    Done previous = std::move(pending_done_);
    pending_done_ = [previous, done](const Status& s) {
      if (previous) previous(s);
      done(s);
    };
    return;
  }
  state_ = State::kStopping;
  stop_target_ = target;
  stop_reason_ = reason;
  pending_done_ = std::move(done);
  if (target == State::kStopped) setStatus("stopping", "");
  for (Slot& slot : slots_) cancelRespawn(slot);
  if (env_.shared == nullptr || shared_listens_.empty()) return stopWorkers();
  // Out of the fronts' tables first, so nothing is handed to a worker that stops.
  std::weak_ptr<bool> alive = alive_;
  env_.shared->detach(record_.name, [this, alive] {
    if (!alive.expired() && state_ == State::kStopping) stopWorkers();
  });
}

void InstanceSupervisor::stopWorkers() {
  uint64_t kill_after = killAfterMs();
  for (Slot& slot : slots_) {
    cancelRespawn(slot);
    if (slot.worker) slot.worker->stop(kill_after);
  }
  for (auto& w : retired_) w->stop(kill_after);
  maybeFinishStop();
}

void InstanceSupervisor::maybeFinishStop() {
  if (state_ != State::kStopping || liveProcesses() > 0) return;
  slots_.clear();  // the listeners close here, after the workers finished their requests
  if (env_.shared != nullptr && !shared_listens_.empty()) env_.shared->release(record_.name);
  shared_listens_.clear();
  running_site_.reset();
  running_ = ipc::ReloadArgs();
  resources_.end();  // the cached answers go with the instance's last worker
  state_ = stop_target_;
  if (state_ == State::kFailed) {
    setStatus("failed", stop_reason_);
  } else {
    setStatus("stopped", "");
  }
  LOG_INFO("instance %s: %s", record_.name.c_str(), std::string(stateName()).c_str());
  if (pending_done_) std::exchange(pending_done_, nullptr)(common::okStatus());
}

// --- helpers -----------------------------------------------------------------------------

std::vector<WorkerProcess*> InstanceSupervisor::readyWorkers() {
  std::vector<WorkerProcess*> targets;
  for (Slot& slot : slots_) {
    if (slot.worker && slot.worker->state() == WorkerProcess::State::kReady) {
      targets.push_back(slot.worker.get());
    }
  }
  return targets;
}

void InstanceSupervisor::retire(std::unique_ptr<WorkerProcess> worker) {
  retired_.push_back(std::move(worker));
}

void InstanceSupervisor::bury(std::unique_ptr<WorkerProcess> worker) {
  // The worker is inside one of its own callbacks: free it on the next loop turn.
  graveyard_.push_back(std::move(worker));
  reaper_.start(0, 0, [this] { graveyard_.clear(); });
}

Result<std::vector<ipc::AppGrant>> InstanceSupervisor::appGrants(
    const common::config::SiteConfig& site) {
  std::string app_dir = env_.app_dir;
  return instanceAppGrants(*env_.store, record_.name, site, [app_dir](const AppSpec& spec) {
    return appSocketPaths(app_dir, spec);
  });
}

Status InstanceSupervisor::saveLaunch() {
  state::LaunchRecord launch{running_.config, running_.config_path, running_.php_pools, 0,
                             running_.apps};
  Status saved = env_.store->saveLaunch(record_.name, launch);
  if (!saved.ok()) {
    return Status(saved.code(), "instance " + record_.name +
                                    ": cannot store what its workers are told: " + saved.message());
  }
  return saved;
}

void InstanceSupervisor::recordDigest(const WorkerProcess& worker) {
  Status stored = env_.store->setWorkerDigest(worker.pid(), launchDigest(worker.launched()));
  if (!stored.ok()) {
    LOG_WARN("instance %s: cannot record what worker pid %d runs: %s", record_.name.c_str(),
             static_cast<int>(worker.pid()), stored.message().c_str());
  }
}

void InstanceSupervisor::setStatus(const std::string& status, const std::string& reason) {
  record_.status = status;
  record_.status_reason = reason;
  Status stored = env_.store->setStatus(record_.name, status, reason);
  if (!stored.ok() && stored.code() != StatusCode::kNotFound) {
    LOG_WARN("instance %s: cannot store status %s: %s", record_.name.c_str(), status.c_str(),
             stored.message().c_str());
  }
}

void InstanceSupervisor::event(std::string_view kind, const std::string& message) {
  Result<state::EventRecord> stored = env_.store->appendEvent(record_.name, kind, message);
  if (!stored.ok()) LOG_WARN("cannot store an event: %s", stored.status().message().c_str());
}

}  // namespace scalws::controller
