// WorkerProcess: the controller's handle on one scalwsd worker, spawned here or re-attached
// after a controller restart. It speaks the controller's side of ipc/worker_messages.h:
//   spawned:  worker hello -> config -> listeners (fds) -> worker ready
//   attached: connect to the worker's attach socket -> worker hello {attached, ...}
// and later reload / stop. It watches the process through a pidfd, so exits are seen the
// same way for children and for adopted workers (whose exit status is not ours to read).
//
// States, the channel's life, stop and exit: peer_process.h, shared with FrontProcess.
//
// Callbacks fire on the loop thread, never from inside a call on this object: on_ready once
// (ok: the worker serves; an error: it will not, and it has been killed), on_exit once when
// the process is gone. The owner must not destroy a WorkerProcess from inside one of its
// callbacks (defer it to the next loop turn); destroying it closes the channel and stops
// watching, the process itself is not signalled (see detach()).
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/metrics/metrics_snapshot.h"
#include "common/metrics/upstream_metrics.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/instances/instance_caches.h"
#include "controller/instances/instance_listeners.h"
#include "controller/instances/worker_spawn.h"
#include "controller/peer_process.h"
#include "controller/state/records.h"
#include "ipc/endpoint.h"
#include "ipc/handler_table.h"
#include "ipc/worker_messages.h"

namespace scalws::controller {

// How long a spawned worker may take from exec to ready (an attach: peer_process.h).
inline constexpr uint64_t kReadyTimeoutMs = 10'000;

struct WorkerLaunch {
  std::string scalwsd;
  ipc::WorkerSettings settings;   // what the `config` message says
  std::string tls_ticket_secret;  // ticket_secret.h; "" = none
  uint64_t ready_timeout_ms = kReadyTimeoutMs;
  // The instance's cache areas (instance_caches.h): copies, handed over with the listeners.
  std::vector<std::string> cache_names;
  std::vector<common::UniqueFd> cache_fds;
  // Who claims which name on its shared addresses (with the listeners).
  std::vector<ipc::SharedAddressNames> shared_names;
  // The instance's access log (instance_log_files.h), handed over with the listeners;
  // invalid: none.
  common::UniqueFd access_log;
};

// What a re-attached worker said it runs (its attach hello), and copies of its listeners
// (pidfd_getfd; empty when they could not be taken).
struct AttachedState {
  bool stopping = false;
  ipc::WorkerSettings settings;
  SlotListeners listeners;
  std::vector<ipc::CacheAreaReport> caches;  // as it reported them; see cacheAreas()
};

class WorkerProcess {
 public:
  using State = PeerProcess::State;

  struct Callbacks {
    std::function<void(WorkerProcess&, const common::Status&)> on_ready;
    // Spawned workers only: the hello arrived, attachAddress() is known.
    std::function<void(WorkerProcess&)> on_hello;
    std::function<void(WorkerProcess&, const std::string& how)> on_exit;
    // A ready (or stopping) worker's periodic `metrics` notification: monotonic totals
    // since it started. Malformed, oversized or too frequent ones are dropped here.
    // `upstreams`: the proxy's figures (empty when the worker proxies nothing).
    std::function<void(WorkerProcess&, ipc::MetricsArgs&&)> on_metrics;
    // Each line of its stderr as written to the controller's log (prefixed and escaped,
    // within WorkerLog's rate): the instance's error.log gets it too (instance_log_files.h).
    std::function<void(const std::string& line)> on_log_line;
  };

  // Starts a worker (worker_spawn.h). `listeners` are the fds to hand over (copies; the
  // worker gets them).
  static common::Result<std::unique_ptr<WorkerProcess>> spawn(uv_loop_t* loop, WorkerLaunch launch,
                                                              SlotListeners listeners,
                                                              Callbacks callbacks);
  // The same for a process already forked: `child` is spawnWorker's result (or, in tests,
  // any child and one end of a socketpair).
  static common::Result<std::unique_ptr<WorkerProcess>> converse(uv_loop_t* loop,
                                                                 SpawnedWorker child,
                                                                 WorkerLaunch launch,
                                                                 SlotListeners listeners,
                                                                 Callbacks callbacks);
  // Re-attaches to a worker a previous controller left (verifies it first, see
  // worker_probe.h). An error means it is not (or no longer) a worker we can trust.
  static common::Result<std::unique_ptr<WorkerProcess>> attach(uv_loop_t* loop,
                                                               const state::WorkerRecord& record,
                                                               Callbacks callbacks);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Graceful stop over the channel (SIGTERM without one); SIGKILL after kill_after_ms.
  void stop(uint64_t kill_after_ms) { peer_.stop(kill_after_ms); }
  void kill() { peer_.kill(); }  // SIGKILL now
  // Sends `reload`; `done` gets the worker's answer (or why it could not be asked).
  void reload(const ipc::ReloadArgs& args, std::function<void(const common::Status&)> done);
  // Sends `shared_names` (a ready worker only; what it answers is logged, not returned).
  void sendSharedNames(const std::vector<ipc::SharedAddressNames>& names);
  // Sends `cache_purge`; `done` gets what the worker dropped (or why not).
  // Sends a reopened access log (a copy; invalid when the instance has none); `done` once
  // the worker writes to it.
  void reopenLogs(common::UniqueFd access_log, std::function<void(const common::Status&)> done);
  void purgeCache(const ipc::CachePurge& purge,
                  std::function<void(common::Result<ipc::CachePurgeResult>)> done);
  // Attached workers: the cache areas it reported, copied and checked against `site`
  // (instance_caches.h).
  common::Result<InstanceCaches> cacheAreas(const common::config::SiteConfig& site) const;
  // Lets go: closes the channel and stops watching; the process keeps serving and waits
  // for the next controller on its attach socket.
  void detach() { peer_.detach(); }

  pid_t pid() const { return peer_.pid(); }
  // The sandbox report the worker sent with `ready` (none for a re-attached worker): its
  // own word, well formed (the decoder refused anything else).
  const std::optional<ipc::SandboxSummary>& sandbox() const { return peer_.sandbox(); }
  uint32_t slot() const { return slot_; }
  State state() const { return peer_.state(); }
  bool isChild() const { return peer_.isChild(); }
  int64_t startedMs() const { return peer_.startedMs(); }  // Unix ms
  uint64_t startedMonoMs() const { return peer_.startedMonoMs(); }
  uint64_t startTicks() const { return peer_.startTicks(); }
  const std::string& attachAddress() const { return peer_.attachAddress(); }
  const AttachedState& attachedState() const { return attached_; }
  // Attached workers: the digest its row recorded of what it was told (launch_digest.h).
  const std::string& recordedDigest() const { return recorded_digest_; }
  SlotListeners takeAttachedListeners() { return std::move(attached_.listeners); }
  const common::CpuSet& cpus() const { return cpus_; }
  // Spawned workers: what they were started with (a reload they took updates it).
  const ipc::WorkerSettings& launched() const { return launch_.settings; }
  std::string_view stateName() const { return peer_.stateName(); }

 private:
  WorkerProcess(uv_loop_t* loop, pid_t pid, common::UniqueFd pidfd, bool attaching,
                const std::string& instance, Callbacks callbacks);

  void onSpawnHello(ipc::Incoming& request, ipc::Replier replier);
  void sendConfig();
  void sendListeners();
  void onReady(ipc::Incoming& request, ipc::Replier replier);
  void onAttachHello(ipc::Incoming& request, ipc::Replier replier);
  void onMetrics(ipc::Incoming& request, ipc::Replier replier);
  common::Result<SlotListeners> copyListeners(const std::vector<ipc::ListenerReport>& reported);

  static const ipc::OpHandler<WorkerProcess> kSpawnHandlers[];
  static const ipc::OpHandler<WorkerProcess> kAttachHandlers[];

  Callbacks callbacks_;
  uint32_t slot_ = 0;
  common::CpuSet cpus_;
  WorkerLaunch launch_;      // spawned: what to send; attached: the instance name
  SlotListeners listeners_;  // spawned: handed over with `listeners`
  AttachedState attached_;   // attached: what it said
  std::string recorded_digest_;
  PeerProcess peer_;  // last: its hooks use the members above
};

}  // namespace scalws::controller
