// Controller: scalws-controller's process. One libuv loop
// on one thread runs everything: the control socket, one InstanceSupervisor per instance and
// the signals. SQLite calls are short and made from that thread.
//
// Start-up, in order:
//   1. the state directory's lock (a second controller refuses, naming the holder's pid);
//   2. the state DB (migrations), the host CPUs (affinity minus --reserve-cpus);
//   3. the control socket (refused when another controller answers on it);
//   4. at the same time: re-attach (every worker row of the DB is verified against /proc
//      and connected to on its attach socket; those that answer keep serving, untouched)
//      and the managed PHP pools (each php-fpm a previous controller left is adopted, the
//      others started; pool_manager.h);
//   6. converge: instances whose desired state is running and that are not are started,
//      those desired stopped that still have workers are stopped; then the shared
//      addresses settle (fronts re-attached first, at step 4, before the workers: a
//      worker's channels are paired with what its address's fronts hold);
//   7. READY=1 to systemd.
// Metrics: a MetricsCollector gets every worker's figures through the
// supervisors; a one-second timer drives its rollups into the DB; --metrics-listen adds
// the Prometheus endpoint on this same loop, --dashboard-listen the dashboard (its
// credentials file read at start-up: a bad one stops the start).
// Shutdown: see systemd_integration.h for which signal stops the instances and which
// leaves them serving for the next controller. A second signal during a graceful stop
// leaves at once (the workers already asked to stop finish on their own). Managed pools
// follow the instances: stopped after them, or left running with them.
#pragma once

#include <uv.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "controller/apps/app_manager.h"
#include "controller/controller_options.h"
#include "controller/dashboard/dashboard.h"
#include "controller/instances/instance_runtime.h"
#include "controller/instances/instance_supervisor.h"
#include "controller/metrics/metrics_collector.h"
#include "controller/metrics/metrics_http_server.h"
#include "controller/pools/pool_manager.h"
#include "controller/server/control_handlers.h"
#include "controller/server/control_server.h"
#include "controller/shared/shared_listeners.h"
#include "controller/state/state_disk.h"
#include "controller/state/state_lock.h"
#include "controller/state/state_store.h"
#include "controller/system_accounts.h"
#include "controller/systemd_integration.h"

namespace scalws::controller {

class Controller final : public InstanceRuntime {
 public:
  // Runs a controller until it is told to stop; returns the exit code (0 after a clean
  // shutdown, 1 when it could not start).
  static int run(const ControllerOptions& options);

  // The steps of run(), for tests that drive a controller on their own thread: create
  // (lock, DB, CPUs), startUp (socket, re-attach, converge; then run loop() until it has
  // nothing left to do), shutDown (what a signal asks for).
  // `accounts` stands in for the host's useradd/userdel in tests (null: the real ones).
  static common::Result<std::unique_ptr<Controller>> create(
      const ControllerOptions& options, std::unique_ptr<Accounts> accounts = nullptr);
  common::Status startUp();
  void shutDown(ShutdownMode mode) { beginShutdown(mode); }
  uv_loop_t* loop() { return &loop_; }
  bool ready() const { return ready_; }
  int exitCode() const { return exit_code_; }

  // InstanceRuntime
  void instanceStored(const state::InstanceRecord& record) override;
  void start(const std::string& name, Commit commit, Done done) override;
  void stop(const std::string& name, Done done) override;
  void restart(const std::string& name, Commit commit, Done done) override;
  void reload(const std::string& name, Done done) override;
  void remove(const std::string& name, Commit commit, Done done) override;
  std::string runtimeState(const std::string& name) const override;
  size_t processCount(const std::string& name) const override;
  ipc::Json processes(const std::string& name) const override;
  std::optional<common::config::SiteConfig> runningSite(const std::string& name) const override;
  bool reloadPending(const std::string& name) const override;
  void purgeCache(const std::string& name, const ipc::CachePurge& purge, PurgeDone done) override;
  void reopenLogs(const std::string& name, Done done) override;
  std::vector<ipc::CacheFigures> cacheFigures(const std::string& name) const override;
  ipc::Json sharedAddresses(const std::optional<std::string>& instance) const override;
  std::optional<std::vector<ipc::PhpPoolGrant>> runningPools(
      const std::string& name) const override;
  std::optional<std::vector<ipc::AppGrant>> runningApps(const std::string& name) const override;

  ~Controller() override;

 private:
  Controller(ControllerOptions options, state::StateLock lock, state::StateStore store,
             std::string scalwsd, common::CpuSet reserved);
  void startShared();
  std::vector<InstanceView> instanceViews() const;

  void reattachAll();
  void reattachWorkers();
  void stopPools();
  void maybeConverge();  // once re-attached and the pools had their first start
  void converge();
  void beginShutdown(ShutdownMode mode);
  void finishShutdown();
  void installSignals();
  static void onSignal(uv_signal_t* handle, int signum);
  InstanceSupervisor* find(const std::string& name) const;
  InstanceSupervisor& supervisorFor(const state::InstanceRecord& record);
  void notifyStatus();
  common::Status startMetrics();
  common::Status startDashboard();
  std::string renderPrometheusText() const;

  ControllerOptions options_;
  state::StateLock lock_;
  state::StateStore store_;
  std::string scalwsd_;
  std::string host_ticket_secret_;  // ticket_secret.h; loaded by startUp()
  common::CpuSet reserved_;
  uv_loop_t loop_{};
  uv_signal_t signals_[4]{};
  std::unique_ptr<Accounts> accounts_;
  std::unique_ptr<PoolManager> pools_;
  std::unique_ptr<AppManager> apps_;
  std::unique_ptr<ControlHandlers> handlers_;
  std::unique_ptr<ControlServer> server_;
  std::unique_ptr<MetricsCollector> metrics_;
  std::unique_ptr<MetricsHttpServer> metrics_http_;
  std::unique_ptr<dashboard::Dashboard> dashboard_;
  uv_timer_t* metrics_timer_ = nullptr;  // freed by its close callback (also checks the disk)
  std::unique_ptr<state::StateDisk> state_disk_;
  std::unique_ptr<SharedListeners> shared_;
  std::map<std::string, std::unique_ptr<InstanceSupervisor>> supervisors_;
  std::map<std::string, std::unique_ptr<InstanceSupervisor>> removed_;  // freed next turn
  size_t start_pending_ = 0;  // supervisors still re-attaching or converging
  size_t stop_pending_ = 0;   // supervisors still stopping at shutdown
  bool reattached_ = false;
  bool pools_started_ = false;
  bool converging_ = false;
  bool ready_ = false;
  bool shutting_down_ = false;
  int exit_code_ = 0;
};

}  // namespace scalws::controller
