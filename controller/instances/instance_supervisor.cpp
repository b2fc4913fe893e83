#include "controller/instances/instance_supervisor.h"

#include <algorithm>

#include "common/log.h"
#include "controller/apps/app_binding.h"
#include "controller/deferred_call.h"
#include "controller/instances/instance_config.h"
#include "controller/instances/launch_digest.h"
#include "controller/instances/process_facts.h"
#include "controller/metrics/metrics_collector.h"
#include "controller/pools/pool_binding.h"
#include "controller/shared/shared_listeners.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::config::WorkerMode;
using ipc::Json;

InstanceSupervisor::InstanceSupervisor(Env env, state::InstanceRecord record)
    : env_(std::move(env)), record_(std::move(record)), policy_(env_.limits), reaper_(env_.loop) {
  if (!env_.log_dir.empty()) {
    logs_ = std::make_shared<InstanceLogFiles>(env_.log_dir, record_.name);
  }
}

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
  Status logs = openLogs(*site);
  if (!logs.ok()) {
    return done(Status(logs.code(), "instance " + record_.name + ": " + logs.message()));
  }
  if (!shared.empty()) {
    std::vector<uint32_t> loops;
    for (const Slot& slot : slots) loops.push_back(slot.loops);
    Result<std::vector<SlotListeners>> handoffs =
        env_.shared->join(record_.name, *site, shared, loops);
    if (!handoffs.ok()) {
      if (logs_) logs_->close();
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
    if (logs_) logs_->close();
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
  caches_ = std::move(caches).value();
  cache_figures_.clear();
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
  if (logs_) {
    cb.on_log_line = [logs = logs_](const std::string& line) { logs->writeError(line); };
  }
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
    // The areas are shared: any worker's figures are the instance's. Only names of its
    // own config are taken, so a worker cannot add caches to what show lists.
    if (!m.caches.empty() && running_site_ && m.caches.size() == running_site_->caches.size()) {
      bool known = true;
      for (size_t i = 0; i < m.caches.size(); ++i) {
        known = known && m.caches[i].name == running_site_->caches[i].name;
      }
      if (known) cache_figures_ = std::move(m.caches);
    }
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
  if (caches_.empty() && running_site_ &&
      (!running_site_->caches.empty() || common::config::hasLimits(*running_site_))) {
    // Taken over from workers whose cache areas could not be kept: new ones.
    Result<InstanceCaches> made = InstanceCaches::make(*running_site_);
    if (!made.ok()) return made.status();
    caches_ = std::move(made).value();
  }
  Result<std::vector<common::UniqueFd>> cache_fds = caches_.duplicateFds();
  if (!cache_fds.ok()) return cache_fds.status();
  Result<std::vector<common::UniqueFd>> copies = slot.listeners.duplicateFds();
  if (!copies.ok()) return copies.status();
  SlotListeners handed;
  handed.specs = slot.listeners.specs;
  handed.fds = std::move(copies).value();
  WorkerLaunch launch;
  launch.scalwsd = env_.scalwsd;
  launch.settings = settingsFor(slot);
  launch.tls_ticket_secret = env_.ticket_secret;
  launch.cache_names = caches_.names();
  launch.cache_fds = std::move(cache_fds).value();
  if (logs_) {
    Result<common::UniqueFd> access = logs_->duplicateAccess();
    if (!access.ok()) return access.status();
    launch.access_log = std::move(access).value();
  }
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
  caches_ = InstanceCaches();
  cache_figures_.clear();
  if (logs_) logs_->close();
  state_ = State::kFailed;
  setStatus("failed", reason);
  if (pending_done_) {
    std::exchange(pending_done_, nullptr)(Status(
        StatusCode::kFailedPrecondition, "instance " + record_.name + " did not start: " + reason));
  }
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
  caches_ = InstanceCaches();  // the cached answers go with the instance's last worker
  cache_figures_.clear();
  if (logs_) logs_->close();
  state_ = stop_target_;
  if (state_ == State::kFailed) {
    setStatus("failed", stop_reason_);
  } else {
    setStatus("stopped", "");
  }
  LOG_INFO("instance %s: %s", record_.name.c_str(), std::string(stateName()).c_str());
  if (pending_done_) std::exchange(pending_done_, nullptr)(common::okStatus());
}

// --- reload ------------------------------------------------------------------------------

void InstanceSupervisor::doReload(Done done) {
  if (state_ != State::kRunning) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "instance " + record_.name + " is " + std::string(stateName()) +
                           ", not running; its stored config applies when it starts"));
  }
  Result<common::config::SiteConfig> site = loadInstanceConfig(record_.config, record_.config_path);
  if (!site.ok()) return done(site.status());
  if (running_site_ && !sameListenAddresses(*running_site_, *site)) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "the listen addresses changed; that needs `scalwsctl instance restart " +
                           record_.name + "`"));
  }
  if (running_site_ && common::config::serverOrDefaults(*running_site_).instance_access_log !=
                           common::config::serverOrDefaults(*site).instance_access_log) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "[server].access_log was turned on or off; that needs `scalwsctl instance "
                       "restart " +
                           record_.name + "`"));
  }
  if (!caches_.fits(*site)) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "the caches' storage changed (which caches, or a memory, disk, max_disk "
                       "or max_entry), or the limit table's (a limit added or all removed, or "
                       "limit_table); that needs `scalwsctl instance restart " +
                           record_.name + "`"));
  }
  Result<std::vector<ipc::PhpPoolGrant>> pools = instancePoolGrants(*env_.store, record_, *site);
  if (!pools.ok()) return done(pools.status());
  Result<std::vector<ipc::AppGrant>> apps = appGrants(*site);
  if (!apps.ok()) return done(apps.status());
  // Spawns from now on use the new config; workers running get it over their channel.
  struct Tally {
    size_t waiting = 0;
    size_t taken = 0;
    Status first_error;
    Done done;
    // What ran before: back in force when every worker refused the new one (e.g. a pool
    // outside their sandbox), so a replacement does not start on what nobody runs.
    ipc::ReloadArgs running;
    std::optional<common::config::SiteConfig> site;
  };
  auto tally = std::make_shared<Tally>();
  tally->done = std::move(done);
  tally->running =
      std::exchange(running_, ipc::ReloadArgs{record_.config, record_.config_path,
                                              std::move(pools).value(), std::move(apps).value()});
  tally->site = std::exchange(running_site_, std::move(site).value());
  std::vector<WorkerProcess*> targets;
  for (Slot& slot : slots_) {
    if (slot.worker && slot.worker->state() == WorkerProcess::State::kReady) {
      targets.push_back(slot.worker.get());
    }
  }
  tally->waiting = targets.size();
  if (targets.empty()) return tally->done(saveLaunch());  // the next spawns get it
  std::weak_ptr<bool> alive = alive_;
  for (WorkerProcess* w : targets) {
    w->reload(running_, [this, alive, tally, w](const Status& s) {
      if (s.ok()) ++tally->taken;
      if (s.ok() && !alive.expired()) recordDigest(*w);
      if (!s.ok() && tally->first_error.ok()) tally->first_error = s;
      if (--tally->waiting != 0) return;
      if (!alive.expired() && state_ == State::kRunning) {
        if (tally->taken == 0) {
          running_ = std::move(tally->running);
          running_site_ = std::move(tally->site);
        } else {
          Status saved = saveLaunch();
          if (!saved.ok() && tally->first_error.ok()) tally->first_error = saved;
          // Its names may have changed: the fronts and every worker on its addresses hear.
          if (env_.shared != nullptr && !shared_listens_.empty()) env_.shared->refresh();
        }
      }
      tally->done(tally->first_error);
    });
  }
}

// --- cache purge -------------------------------------------------------------------------

void InstanceSupervisor::purgeCache(const ipc::CachePurge& purge,
                                    std::function<void(Result<ipc::CachePurgeResult>)> done) {
  std::vector<WorkerProcess*> targets;
  for (Slot& slot : slots_) {
    if (slot.worker && slot.worker->state() == WorkerProcess::State::kReady) {
      targets.push_back(slot.worker.get());
    }
  }
  if (state_ != State::kRunning || targets.empty()) {
    Status why(StatusCode::kFailedPrecondition, "instance " + record_.name + " is not running");
    return deferCall(env_.loop, [done, why] { done(why); });
  }
  struct Tally {
    size_t waiting = 0;
    ipc::CachePurgeResult total;
    Status first_error;
    std::function<void(Result<ipc::CachePurgeResult>)> done;
  };
  auto tally = std::make_shared<Tally>();
  tally->waiting = targets.size();
  tally->done = std::move(done);
  for (WorkerProcess* w : targets) {
    w->purgeCache(purge, [tally](Result<ipc::CachePurgeResult> r) {
      if (r.ok()) {
        tally->total.memory_entries += r->memory_entries;
        tally->total.disk_files += r->disk_files;
      } else if (tally->first_error.ok()) {
        tally->first_error = r.status();
      }
      if (--tally->waiting != 0) return;
      if (!tally->first_error.ok()) return tally->done(tally->first_error);
      tally->done(tally->total);
    });
  }
}

// --- logs --------------------------------------------------------------------------------

Status InstanceSupervisor::openLogs(const common::config::SiteConfig& site) {
  if (!logs_) return common::okStatus();
  return logs_->open(common::config::serverOrDefaults(site).instance_access_log);
}

void InstanceSupervisor::reopenLogs(Done done) {
  std::vector<WorkerProcess*> targets;
  for (Slot& slot : slots_) {
    if (slot.worker && slot.worker->state() == WorkerProcess::State::kReady) {
      targets.push_back(slot.worker.get());
    }
  }
  if (!logs_ || state_ != State::kRunning || targets.empty()) {
    Status why(StatusCode::kFailedPrecondition, "instance " + record_.name + " is not running");
    return deferCall(env_.loop, [done, why] { done(why); });
  }
  Status reopened = logs_->reopen();
  if (!reopened.ok()) {
    Status why(reopened.code(), "instance " + record_.name + ": " + reopened.message());
    return deferCall(env_.loop, [done, why] { done(why); });
  }
  struct Tally {
    size_t waiting = 0;
    Status first_error;
    Done done;
  };
  auto tally = std::make_shared<Tally>();
  tally->waiting = targets.size();
  tally->done = std::move(done);
  for (WorkerProcess* w : targets) {
    Result<common::UniqueFd> copy = logs_->duplicateAccess();
    auto counted = [tally](const Status& s) {
      if (!s.ok() && tally->first_error.ok()) tally->first_error = s;
      if (--tally->waiting == 0) tally->done(tally->first_error);
    };
    if (!copy.ok()) {
      counted(copy.status());
      continue;
    }
    w->reopenLogs(std::move(copy).value(), counted);
  }
}

// --- helpers -----------------------------------------------------------------------------

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
