// InstanceSupervisor: start — the slots, their listeners, the run's resources, and the
// workers spawned into them until all are ready (or the first fails).
#include <algorithm>

#include "common/log.h"
#include "controller/apps/app_binding.h"
#include "controller/instances/instance_config.h"
#include "controller/instances/instance_supervisor.h"
#include "controller/instances/launch_digest.h"
#include "controller/metrics/metrics_collector.h"
#include "controller/pools/pool_binding.h"
#include "controller/shared/shared_listeners.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::config::WorkerMode;

// --- start -------------------------------------------------------------------------------

std::vector<InstanceSupervisor::Slot> InstanceSupervisor::layout() const {
  std::vector<Slot> out;
  const common::CpuSet& cpus = record_.assigned_cpus;
  if (record_.mode == WorkerMode::kSingle) {
    Slot s;
    s.cpus = cpus;
    s.loops = static_cast<uint32_t>(std::max<size_t>(1, cpus.size()));
    out.push_back(std::move(s));
  } else {
    for (uint32_t cpu : cpus.ids()) {
      Slot s;
      s.index = static_cast<uint32_t>(out.size());
      s.cpus = common::CpuSet{cpu};
      out.push_back(std::move(s));
    }
  }
  return out;
}

void InstanceSupervisor::doStart(const Commit& commit, Done done) {
  if (state_ == State::kRunning) {
    Status committed = commit ? commit() : common::okStatus();
    return done(committed);
  }
  Result<common::config::SiteConfig> site = loadInstanceConfig(record_.config, record_.config_path);
  if (!site.ok()) return done(site.status());
  Result<std::vector<ipc::PhpPoolGrant>> pools = instancePoolGrants(*env_.store, record_, *site);
  if (!pools.ok()) return done(pools.status());
  Result<std::vector<ipc::AppGrant>> apps = appGrants(*site);
  if (!apps.ok()) return done(apps.status());
  std::vector<Slot> slots = layout();
  if (slots.empty()) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "instance " + record_.name + " holds no CPU to run on"));
  }
  std::set<size_t> shared =
      env_.shared != nullptr ? env_.shared->sharedListens(record_.name, *site) : std::set<size_t>();
  for (size_t i = 0; i < site->listens.size(); ++i) {
    if (shared.count(i) != 0) continue;
    Status free = checkAddressFree(site->listens[i]);
    if (!free.ok()) {
      return done(Status(free.code(), "instance " + record_.name + ": " + free.message()));
    }
  }
  uint32_t steering = 0;  // UDP sockets of each HTTP/3 address bound so far
  for (Slot& slot : slots) {
    Result<SlotListeners> bound = bindSlotListeners(*site, slot.loops, steering, shared);
    steering += slot.loops;
    if (!bound.ok()) {
      return done(Status(bound.status().code(),
                         "instance " + record_.name + ": " + bound.status().message()));
    }
    slot.listeners = std::move(bound).value();
  }
  Result<InstanceCaches> caches = InstanceCaches::make(*site);
  if (!caches.ok()) {
    return done(Status(caches.status().code(),
                       "instance " + record_.name + ": " + caches.status().message()));
  }
  Status logs = resources_.openLogs(*site);
  if (!logs.ok()) {
    return done(Status(logs.code(), "instance " + record_.name + ": " + logs.message()));
  }
  if (!shared.empty()) {
    std::vector<uint32_t> loops;
    for (const Slot& slot : slots) loops.push_back(slot.loops);
    Result<std::vector<SlotListeners>> handoffs =
        env_.shared->join(record_.name, *site, shared, loops);
    if (!handoffs.ok()) {
      resources_.closeLogs();
      return done(Status(handoffs.status().code(),
                         "instance " + record_.name + ": " + handoffs.status().message()));
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      SlotListeners& ends = (*handoffs)[i];
      for (size_t k = 0; k < ends.specs.size(); ++k) {
        slots[i].listeners.specs.push_back(std::move(ends.specs[k]));
        slots[i].listeners.fds.push_back(std::move(ends.fds[k]));
      }
    }
  }
  auto unshare = [&] {
    if (!shared.empty()) env_.shared->release(record_.name);
    resources_.closeLogs();
  };
  if (commit) {
    Status committed = commit();
    if (!committed.ok()) {
      unshare();
      return done(committed);
    }
  }
  running_ = ipc::ReloadArgs{record_.config, record_.config_path, std::move(pools).value(),
                             std::move(apps).value()};
  Status saved = saveLaunch();
  if (!saved.ok()) {
    running_ = ipc::ReloadArgs();
    unshare();
    return done(saved);
  }
  shared_listens_ = std::move(shared);
  slots_ = std::move(slots);
  running_site_ = std::move(site).value();
  resources_.begin(std::move(caches).value());
  policy_.reset();
  state_ = State::kStarting;
  pending_done_ = std::move(done);
  setStatus("starting", "");
  for (Slot& slot : slots_) {
    Status spawned = spawnSlot(slot);
    if (!spawned.ok()) return startFailed(spawned.message());
  }
}

WorkerProcess::Callbacks InstanceSupervisor::callbacks() {
  WorkerProcess::Callbacks cb;
  cb.on_log_line = resources_.errorLineSink();
  cb.on_ready = [this](WorkerProcess& w, const Status& s) {
    if (w.state() == WorkerProcess::State::kAttaching || !attaching_.empty()) {
      for (const auto& a : attaching_) {
        if (a.get() == &w) return onAttachReady(w, s);
      }
    }
    onWorkerReady(w, s);
  };
  cb.on_hello = [this](WorkerProcess& w) {
    state::WorkerRecord row;
    row.pid = w.pid();
    row.instance = record_.name;
    row.slot = w.slot();
    row.start_ticks = w.startTicks();
    row.attach_address = w.attachAddress();
    row.started_ms = w.startedMs();
    row.launch_digest = launchDigest(w.launched());
    Status stored = env_.store->recordWorker(row);
    if (!stored.ok()) LOG_WARN("cannot record worker %d: %s", w.pid(), stored.message().c_str());
  };
  cb.on_exit = [this](WorkerProcess& w, const std::string& how) {
    if (env_.metrics != nullptr) env_.metrics->workerExited(record_.name, w.pid());
    onWorkerExit(w, how);
  };
  cb.on_metrics = [this](WorkerProcess& w, ipc::MetricsArgs&& m) {
    if (running_site_) resources_.takeFigures(std::move(m.caches), *running_site_);
    if (env_.metrics == nullptr) return;
    env_.metrics->workerSnapshot(record_.name, w.pid(), w.isChild(), m.metrics);
    env_.metrics->workerUpstreams(record_.name, w.pid(), std::move(m.upstreams));
  };
  return cb;
}

ipc::WorkerSettings InstanceSupervisor::settingsFor(const Slot& slot) const {
  ipc::WorkerSettings s;
  s.instance = record_.name;
  s.slot = slot.index;
  s.mode = record_.mode;
  s.loops = slot.loops;
  s.cpus = slot.cpus;
  s.user = record_.user;
  s.config = running_.config;
  s.config_path = running_.config_path;
  s.php_pools = running_.php_pools;
  s.apps = running_.apps;
  return s;
}

uint32_t InstanceSupervisor::firstSteering(uint32_t index) const {
  uint32_t steering = 0;
  for (const Slot& s : slots_) {
    if (s.index < index) steering += s.loops;
  }
  return steering;
}

Status InstanceSupervisor::spawnSlot(Slot& slot) {
  if (slot.listeners.fds.empty() && running_site_) {
    // Taken over from a worker whose listeners we could not copy: bind anew, in the slot's
    // own place of each HTTP/3 port's reuseport group.
    Result<SlotListeners> bound =
        bindSlotListeners(*running_site_, slot.loops, firstSteering(slot.index), shared_listens_);
    if (!bound.ok()) return bound.status();
    slot.listeners = std::move(bound).value();
  }
  bool has_channels = std::any_of(slot.listeners.specs.begin(), slot.listeners.specs.end(),
                                  [](const ipc::ListenerSpec& s) { return s.handoff; });
  if (!shared_listens_.empty() && !has_channels && running_site_ && env_.shared != nullptr) {
    // Its channels could not be kept from the worker a re-attach refused: new ones.
    Result<SlotListeners> ends = env_.shared->slotChannels(record_.name, *running_site_,
                                                           shared_listens_, slot.index, slot.loops);
    if (!ends.ok()) return ends.status();
    for (size_t k = 0; k < ends->specs.size(); ++k) {
      slot.listeners.specs.push_back(std::move(ends->specs[k]));
      slot.listeners.fds.push_back(std::move(ends->fds[k]));
    }
  }
  // Taken over from workers whose cache areas could not be kept: new ones.
  if (running_site_) SCALWS_RETURN_IF_ERROR(resources_.ensureCaches(*running_site_));
  Result<std::vector<common::UniqueFd>> copies = slot.listeners.duplicateFds();
  if (!copies.ok()) return copies.status();
  SlotListeners handed;
  handed.specs = slot.listeners.specs;
  handed.fds = std::move(copies).value();
  WorkerLaunch launch;
  launch.scalwsd = env_.scalwsd;
  launch.settings = settingsFor(slot);
  launch.tls_ticket_secret = env_.ticket_secret;
  SCALWS_RETURN_IF_ERROR(resources_.handTo(launch));
  if (env_.shared != nullptr && !shared_listens_.empty()) {
    launch.shared_names = env_.shared->namesFor(record_.name);
  }
  Result<std::unique_ptr<WorkerProcess>> worker =
      WorkerProcess::spawn(env_.loop, std::move(launch), std::move(handed), callbacks());
  if (!worker.ok()) return worker.status();
  slot.worker = std::move(worker).value();
  slot.attached = false;
  LOG_INFO("instance %s: worker %u started (pid %d, CPUs %s)", record_.name.c_str(), slot.index,
           static_cast<int>(slot.worker->pid()), slot.cpus.toString().c_str());
  return common::okStatus();
}

void InstanceSupervisor::onWorkerReady(WorkerProcess& worker, const Status& status) {
  if (status.ok() && env_.shared != nullptr && !shared_listens_.empty() &&
      (state_ == State::kStarting || state_ == State::kRunning)) {
    env_.shared->workerUp(record_.name, worker.slot());
  }
  if (state_ == State::kStarting) {
    if (!status.ok()) {
      return startFailed("worker " + std::to_string(worker.slot()) + ": " + status.message());
    }
    for (const Slot& s : slots_) {
      if (!s.worker || s.worker->state() != WorkerProcess::State::kReady) return;
    }
    state_ = State::kRunning;
    setStatus("running", "");
    LOG_INFO("instance %s: running, %zu worker(s)", record_.name.c_str(), slots_.size());
    if (pending_done_) std::exchange(pending_done_, nullptr)(common::okStatus());
    return;
  }
  if (state_ == State::kRunning && status.ok()) {
    LOG_INFO("instance %s: worker %u serving again (pid %d)", record_.name.c_str(), worker.slot(),
             static_cast<int>(worker.pid()));
    const ipc::WorkerSettings& launched = worker.launched();
    if (launched.config != running_.config || launched.config_path != running_.config_path ||
        launched.php_pools != running_.php_pools || launched.apps != running_.apps) {
      // Spawned before a reload that it then missed (it was not ready): catch it up.
      std::string name = record_.name;
      pid_t pid = worker.pid();
      worker.reload(running_, [name, pid](const Status& s) {
        if (!s.ok()) {
          LOG_WARN("instance %s: worker pid %d did not take the reload: %s", name.c_str(),
                   static_cast<int>(pid), s.message().c_str());
        }
      });
    }
  }
  // A replacement that failed is killed by WorkerProcess; its exit counts as a crash.
}

void InstanceSupervisor::startFailed(const std::string& reason) {
  LOG_ERROR("instance %s: start failed: %s", record_.name.c_str(), reason.c_str());
  for (Slot& slot : slots_) {
    cancelRespawn(slot);
    if (slot.worker) {
      slot.worker->kill();
      retire(std::move(slot.worker));
    }
  }
  slots_.clear();  // closes our listener copies
  if (env_.shared != nullptr && !shared_listens_.empty()) env_.shared->release(record_.name);
  shared_listens_.clear();
  running_site_.reset();
  resources_.end();
  state_ = State::kFailed;
  setStatus("failed", reason);
  if (pending_done_) {
    std::exchange(pending_done_, nullptr)(Status(
        StatusCode::kFailedPrecondition, "instance " + record_.name + " did not start: " + reason));
  }
}

}  // namespace scalws::controller
