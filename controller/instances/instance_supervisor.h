// InstanceSupervisor: runs one instance's workers.
//
// Layout: "multi" — one slot per assigned CPU, each a worker process pinned to its CPU
// with one loop; "single" — one slot, one process with one loop per assigned CPU and the
// whole set as its affinity. Each slot owns its listener sockets (instance_listeners.h):
// the controller binds them and keeps a copy, so a replacement worker accepts from the
// same queues.
//
// What the workers are told (the config text, path and pools) is stored in the DB before
// they are told (`launches`), each worker's row keeps the digest of what it was told, and a
// re-attach takes the config from there only (instance_supervisor_attach.cpp).
//
// States (enum State): stopped -> starting -> running -> stopping -> stopped, and failed
// (a start that did not come up, or a crash loop). What it observes is written to the DB as
// the instance's status and reason (the store records an event on every change).
//   - start: binds every listener first (a port in use refuses the start and changes
//     nothing), then runs `commit` (the caller persists the desired state), spawns every
//     slot and answers once all are ready — or fails with the first worker's reason,
//     killing the others.
//   - a worker that exits unexpectedly while running is restarted after the backoff of
//     restart_policy.h; the crash limit stops the instance and marks it failed.
//   - stop: `stop` to every worker (graceful: requests in flight finish within the
//     shutdown timeout, SIGKILL 5 s after it), then the listeners are closed. On a shared
//     address its channels leave the fronts' tables first (controller/shared/).
//   - a listener whose address another instance's config names too is not bound: its
//     workers get a hand-off channel per loop from the address's fronts instead
//     (shared_listens_, controller/shared/shared_listeners.h).
//   - reload: the stored config to every worker, swapped in place (no connection is
//     dropped); refused when it does not load or its listen addresses changed (restart).
//   - PHP pools (pool_binding.h): start and reload read the pools assigned to the instance
//     from the store and hand them to the workers with the config; a php route naming a
//     pool not assigned refuses the start or the reload. Workers started later (crash
//     restarts) get the pools of the last start or reload, like the config.
//
// Operations (start, stop, restart, reload) run one at a time in arrival order; each calls
// its `done` exactly once, on the loop thread, never from inside the call that queued it.
#pragma once

#include <uv.h>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "controller/instances/instance_listeners.h"
#include "controller/instances/instance_resources.h"
#include "controller/instances/worker_process.h"
#include "controller/loop_handles.h"
#include "controller/restart_policy.h"
#include "controller/state/records.h"
#include "controller/state/state_store.h"
#include "ipc/message.h"
#include "ipc/worker_messages.h"

namespace scalws::controller {

class MetricsCollector;
class SharedListeners;

// After a worker's graceful stop was asked: the instance's shutdown_timeout plus this.
inline constexpr uint64_t kKillGraceMs = 5'000;

class InstanceSupervisor {
 public:
  enum class State { kStopped, kStarting, kRunning, kStopping, kFailed };
  using Done = std::function<void(const common::Status&)>;
  using Commit = std::function<common::Status()>;

  struct Env {
    uv_loop_t* loop = nullptr;
    state::StateStore* store = nullptr;
    std::string scalwsd;
    RestartLimits limits;
    MetricsCollector* metrics = nullptr;  // gets the workers' figures; may be null
    std::string ticket_secret;            // the instance's (ticket_secret.h); "" = none
    std::string app_dir;                  // the apps' sockets (--app-dir; app_binding.h)
    // Where LOG_DIR/NAME/{access,error}.log go (--log-dir; instance_log_files.h); "" = none.
    std::string log_dir;
    // The addresses instances share (controller/shared/); null: every listener is direct.
    SharedListeners* shared = nullptr;
  };

  InstanceSupervisor(Env env, state::InstanceRecord record);
  ~InstanceSupervisor();
  InstanceSupervisor(const InstanceSupervisor&) = delete;
  InstanceSupervisor& operator=(const InstanceSupervisor&) = delete;

  void start(Commit commit, Done done);
  void stop(Done done);
  void restart(Commit commit, Done done);
  void reload(Done done);

  // The stored row changed (instance set): the next start or reload uses it.
  void setRecord(state::InstanceRecord record) {
    record_ = std::move(record);
    stored_site_.reset();
  }
  // Re-attaches to the workers a previous controller left (rows of the `workers` table),
  // queued like an operation. Those that answer become this instance's workers (it is then
  // running; slots nobody covers are respawned); those that fit no slot, or are ours but
  // do not answer, are stopped; rows of processes that are gone are deleted.
  void reattach(const std::vector<state::WorkerRecord>& rows, Done done);
  // The controller exits and leaves the workers serving: channels closed, nothing signalled.
  void leave();

  State state() const { return state_; }
  std::string_view stateName() const;
  const state::InstanceRecord& record() const { return record_; }
  // The config the workers run, when any run.
  const std::optional<common::config::SiteConfig>& runningSite() const { return running_site_; }
  // The stored config, loaded (nullopt when it does not load); kept until the record changes.
  const std::optional<common::config::SiteConfig>& storedSite() const;
  // Tells every serving worker who claims which name on its shared addresses.
  void pushSharedNames(const std::vector<ipc::SharedAddressNames>& names);
  bool runningConfigDiffers() const;
  // The pools the workers run with (empty when none run).
  const std::vector<ipc::PhpPoolGrant>& runningPools() const { return running_.php_pools; }
  const std::vector<ipc::AppGrant>& runningApps() const { return running_.apps; }
  // Drops cached answers in every serving worker (ipc/cache_messages.h); `done` once all
  // answered, with the totals, or the first failure.
  void purgeCache(const ipc::CachePurge& purge,
                  std::function<void(common::Result<ipc::CachePurgeResult>)> done);
  // Reopens access.log and error.log (after a rotation) and sends the new access log to
  // every serving worker; `done` once all of them write to it, or with the first failure.
  void reopenLogs(Done done);
  // The caches' sizes as a worker last reported them (empty before any report, or when
  // none run).
  const std::vector<ipc::CacheFigures>& cacheFigures() const { return resources_.cacheFigures(); }
  size_t liveProcesses() const;
  bool busy() const { return op_running_ || !queue_.empty(); }
  // [{slot, pid, state, cpus, started_ms, restarts, attached}] for instance show.
  ipc::Json processes() const;

 private:
  struct Slot {
    uint32_t index = 0;
    common::CpuSet cpus;
    uint32_t loops = 1;
    SlotListeners listeners;  // our copies; empty after a re-attach that could not take them
    std::unique_ptr<WorkerProcess> worker;
    std::unique_ptr<LoopTimer> restart_timer;  // set while a respawn is scheduled
    uint64_t restart_at_ms = 0;
    uint32_t restarts = 0;
    bool attached = false;
  };

  void enqueue(std::function<void(Done)> op, Done done);
  void runNext();
  void doStart(const Commit& commit, Done done);
  void doStop(Done done, State target, const std::string& reason);
  void stopWorkers();
  void doReload(Done done);
  // The workers that serve now (ready), for an operation sent to each.
  std::vector<WorkerProcess*> readyWorkers();

  std::vector<Slot> layout() const;
  // The steering id of slot `index`'s first UDP socket: the loops of the slots before it.
  uint32_t firstSteering(uint32_t index) const;
  common::Status spawnSlot(Slot& slot);
  // What a worker of `slot` is told to be, from the record and what runs.
  ipc::WorkerSettings settingsFor(const Slot& slot) const;
  void onWorkerReady(WorkerProcess& worker, const common::Status& status);
  void onWorkerExit(WorkerProcess& worker, const std::string& how);
  void startFailed(const std::string& reason);
  void crashLoop(const std::string& reason);
  void maybeFinishStop();
  void scheduleRespawn(Slot& slot, uint64_t delay_ms);
  void respawn(uint32_t index);
  void onAttachReady(WorkerProcess& worker, const common::Status& status);
  void maybeFinishAttach();
  void adopt(std::vector<std::unique_ptr<WorkerProcess>> workers);
  // What the DB says the workers were last told (nullopt: nothing, or unreadable).
  std::optional<ipc::ReloadArgs> storedLaunch();
  // The apps assigned to it now, checked against `site`'s app routes (app_binding.h).
  common::Result<std::vector<ipc::AppGrant>> appGrants(const common::config::SiteConfig& site);
  // Why an attached worker is not taken over ("" when it is; running_ holds the launch).
  std::string refusal(const WorkerProcess& worker, const std::vector<Slot>& slots,
                      bool have_launch) const;
  // Stores what the workers are told now (running_); an error when the DB cannot keep it.
  common::Status saveLaunch();
  // A worker took what it was told (spawn or reload): its row says so.
  void recordDigest(const WorkerProcess& worker);
  void cancelRespawn(Slot& slot);
  void retire(std::unique_ptr<WorkerProcess> worker);
  void bury(std::unique_ptr<WorkerProcess> worker);
  Slot* slotOf(const WorkerProcess& worker);
  void setStatus(const std::string& status, const std::string& reason);
  void event(std::string_view kind, const std::string& message);
  uint64_t killAfterMs() const;
  WorkerProcess::Callbacks callbacks();

  Env env_;
  state::InstanceRecord record_;
  State state_ = State::kStopped;
  RestartPolicy policy_;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<WorkerProcess>> attaching_;  // re-attach: no hello yet
  std::vector<std::unique_ptr<WorkerProcess>> attached_;   // re-attach: said hello
  Done attach_done_;
  bool adopted_ = false;
  std::vector<std::unique_ptr<WorkerProcess>> retired_;    // asked to go, not gone yet
  std::vector<std::unique_ptr<WorkerProcess>> graveyard_;  // gone; freed next loop turn
  LoopTimer reaper_;

  // What the workers run (config text, path, pools): sent at spawn and on reload.
  ipc::ReloadArgs running_;
  // Its listeners that go through a shared address's front (indices into the running
  // config's listens), fixed for the run.
  std::set<size_t> shared_listens_;
  mutable std::optional<std::optional<common::config::SiteConfig>> stored_site_;
  std::optional<common::config::SiteConfig> running_site_;
  // Its cache areas, limit table and log files while it runs (every worker gets copies).
  InstanceResources resources_;

  std::deque<std::pair<std::function<void(Done)>, Done>> queue_;
  bool op_running_ = false;
  Done pending_done_;  // the start or stop in progress
  State stop_target_ = State::kStopped;
  std::string stop_reason_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace scalws::controller
