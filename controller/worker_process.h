// WorkerProcess: the controller's handle on one scalwsd worker, spawned here or re-attached
// after a controller restart. It speaks the worker's side of the conversation documented in
// worker/server/instance_session.h:
//   spawned:  worker hello -> config -> listeners (fds) -> worker ready
//   attached: connect to the worker's attach socket -> worker hello {attached:true, ...}
// and later reload / stop. It watches the process through a pidfd, so exits are seen the
// same way for children and for adopted workers (whose exit status is not ours to read).
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
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/cpu_set.h"
#include "common/metrics/metrics_snapshot.h"
#include "common/metrics/upstream_metrics.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/instance_listeners.h"
#include "controller/state/records.h"
#include "ipc/endpoint.h"
#include "ipc/php_pool_grants.h"

namespace scalws::controller {

// How long a spawned worker may take from exec to ready, and an attach to its hello.
inline constexpr uint64_t kReadyTimeoutMs = 10'000;
inline constexpr uint64_t kAttachTimeoutMs = 3'000;

struct WorkerLaunch {
  std::string scalwsd;
  std::string instance;
  uint32_t slot = 0;
  common::config::WorkerMode mode = common::config::WorkerMode::kMulti;
  uint32_t loops = 1;
  common::CpuSet cpus;
  std::string user;
  std::string config;
  std::string config_path;
  std::vector<ipc::PhpPoolGrant> php_pools;  // pool_binding.h
  std::string tls_ticket_secret;             // ticket_secret.h; sent in hex when set
};

// What a re-attached worker says it runs (its attach hello).
struct AttachedState {
  uint32_t slot = 0;
  bool stopping = false;
  common::config::WorkerMode mode = common::config::WorkerMode::kMulti;
  uint32_t loops = 1;
  common::CpuSet cpus;
  std::string user;
  std::string config;
  std::string config_path;
  std::vector<ipc::PhpPoolGrant> php_pools;
  // Copies of its listeners (pidfd_getfd); empty when they could not be taken.
  SlotListeners listeners;
};

class WorkerProcess {
 public:
  enum class State { kAttaching, kStarting, kReady, kStopping, kExited };

  struct Callbacks {
    std::function<void(WorkerProcess&, const common::Status&)> on_ready;
    // Spawned workers only: the hello arrived, attachAddress() is known.
    std::function<void(WorkerProcess&)> on_hello;
    std::function<void(WorkerProcess&, const std::string& how)> on_exit;
    // A ready (or stopping) worker's periodic `metrics` notification: monotonic totals
    // since it started. Malformed ones are dropped here.
    // `upstreams`: the proxy's figures (empty when the worker proxies nothing).
    std::function<void(WorkerProcess&, const common::metrics::MetricsSnapshot&,
                       std::vector<common::metrics::UpstreamMetrics>)>
        on_metrics;
  };

  // Starts a worker. `listeners` are the fds to hand over (copies; the worker gets them).
  static common::Result<std::unique_ptr<WorkerProcess>> spawn(uv_loop_t* loop, WorkerLaunch launch,
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
  void stop(uint64_t kill_after_ms);
  void kill();  // SIGKILL now
  // Sends `reload`; `done` gets the worker's answer (or why it could not be asked).
  void reload(const std::string& config, const std::string& config_path,
              const std::vector<ipc::PhpPoolGrant>& php_pools,
              std::function<void(const common::Status&)> done);
  // Lets go: closes the channel and stops watching; the process keeps serving and waits
  // for the next controller on its attach socket.
  void detach();

  pid_t pid() const { return pid_; }
  // The sandbox report the worker sent with `ready` (null for a re-attached worker).
  const nlohmann::json& sandbox() const { return sandbox_; }
  uint32_t slot() const { return slot_; }
  State state() const { return state_; }
  bool isChild() const { return is_child_; }
  int64_t startedMs() const { return started_wall_ms_; }  // Unix ms
  uint64_t startedMonoMs() const { return started_mono_ms_; }
  uint64_t startTicks() const { return start_ticks_; }
  const std::string& attachAddress() const { return attach_address_; }
  const AttachedState& attachedState() const { return attached_; }
  SlotListeners takeAttachedListeners() { return std::move(attached_.listeners); }
  const common::CpuSet& cpus() const { return cpus_; }
  // Spawned workers: the config text they were started with.
  const std::string& launchedConfig() const { return launch_.config; }
  const std::vector<ipc::PhpPoolGrant>& launchedPools() const { return launch_.php_pools; }
  std::string_view stateName() const;

 private:
  WorkerProcess(uv_loop_t* loop, pid_t pid, common::UniqueFd pidfd, Callbacks callbacks);

  common::Status watchExit();
  void armTimer(uint64_t ms, void (*fire)(WorkerProcess&));
  void registerSpawnHandlers();
  void registerAttachHandlers();
  void registerMetricsHandler();
  void onMetrics(const ipc::Message& notification);
  void onSpawnHello(const ipc::Message& request, ipc::Replier replier);
  void sendConfig();
  void sendListeners();
  void onReady(const ipc::Message& request, ipc::Replier replier);
  void onAttachHello(const ipc::Message& request, ipc::Replier replier);
  void failStart(const std::string& reason);
  void reportReady(const common::Status& status);
  void onProcessExit();
  static void onPidfd(uv_poll_t* handle, int status, int events);

  uv_loop_t* loop_;
  pid_t pid_;
  nlohmann::json sandbox_;
  common::UniqueFd pidfd_;
  Callbacks callbacks_;
  State state_ = State::kStarting;
  bool is_child_ = false;
  bool ready_reported_ = false;
  bool exit_reported_ = false;
  bool bad_metrics_logged_ = false;
  uint32_t slot_ = 0;
  int64_t started_wall_ms_ = 0;
  uint64_t started_mono_ms_ = 0;
  uint64_t start_ticks_ = 0;
  std::string attach_address_;
  std::string attach_error_;
  common::CpuSet cpus_;
  std::unique_ptr<ipc::Endpoint> endpoint_;
  uv_poll_t* pidfd_poll_ = nullptr;  // handles are heap-allocated, freed by close callbacks
  uv_timer_t* timer_ = nullptr;
  void (*timer_fire_)(WorkerProcess&) = nullptr;

  WorkerLaunch launch_;      // spawned: what to send
  SlotListeners listeners_;  // spawned: handed over with `listeners`
  AttachedState attached_;   // attached: what it said
};

}  // namespace scalws::controller
