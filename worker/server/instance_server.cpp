#include "worker/server/instance_server.h"

#include <uv.h>

#include <csignal>
#include <map>
#include <memory>

#include "common/log.h"
#include "common/net/quic_route.h"
#include "worker/handlers/proxy/upstream_stats.h"
#include "worker/metrics/metrics_area.h"
#include "worker/metrics/process_stats.h"
#include "worker/net/shared_hosts.h"
#include "worker/server/instance_loops.h"
#include "worker/server/instance_pools.h"
#include "worker/server/instance_session.h"
#include "worker/server/worker_sandbox.h"

namespace scalws::worker {
namespace {

// The report in the shape of the ready message (ipc/sandbox_summary.h).
ipc::SandboxSummary summaryOf(const sandbox::SandboxReport& r) {
  ipc::SandboxSummary s;
  s.mode = std::string(sandbox::sandboxModeName(r.mode));
  s.identity_changed = r.identity.changed;
  s.user = r.identity.user;
  s.uid = r.identity.uid;
  s.gid = r.identity.gid;
  s.groups.assign(r.identity.groups.begin(), r.identity.groups.end());
  s.no_new_privs = r.noNewPrivs;
  s.landlock_abi = static_cast<uint64_t>(r.landlock.abi);
  s.landlock_enforced = r.landlock.enforced;
  for (const sandbox::LandlockPathReport& p : r.landlock.paths) {
    s.landlock_paths.push_back({p.path, std::string(sandbox::pathAccessName(p.access))});
  }
  s.tcp_connect_ports.assign(r.landlock.tcpConnectPorts.begin(), r.landlock.tcpConnectPorts.end());
  s.landlock_scoped = sandbox::landlockScopeNames(r.landlock.scoped);
  s.seccomp_enforced = r.seccomp.enforced;
  s.seccomp_action = std::string(sandbox::seccompActionName(r.seccomp.action));
  s.seccomp_profile = std::string(sandbox::seccompProfileName(r.seccomp.profile));
  s.allowed_syscalls = r.seccomp.allowedSyscalls;
  s.udp_datagrams = r.seccomp.udpDatagrams;
  s.degraded = r.degraded;
  s.verified = r.verified;
  return s;
}

// The names on the shared address `address` as the controller sent them; one that names
// nobody when it sent none (every request then gets 421 rather than another's answer).
std::shared_ptr<const SharedHosts> sharedHostsFor(const std::vector<ipc::SharedAddressNames>& all,
                                                  const std::string& address, uint16_t port) {
  for (const ipc::SharedAddressNames& names : all) {
    if (names.address == address && names.port == port) return SharedHosts::build(names);
  }
  return SharedHosts::build(ipc::SharedAddressNames{address, port, {}, {}, {}});
}

// How often a worker tells the controller its figures (every second).
constexpr uint64_t kMetricsIntervalMs = 1000;

class InstanceServer final : public InstanceHost {
 public:
  InstanceServer(const std::string& instance, int ipc_fd, int attach_fd) {
    uv_loop_init(&uv_);
    session_ = std::make_unique<InstanceSession>(&uv_, instance, common::UniqueFd(ipc_fd),
                                                 common::UniqueFd(attach_fd), *this);
  }
  ~InstanceServer() override {
    loops_.reset();
    metrics_area_.reset();  // after the loops that write it
    session_.reset();
    uv_run(&uv_, UV_RUN_NOWAIT);  // close callbacks of what the session still held
    uv_loop_close(&uv_);
  }

  int run() {
    for (uv_signal_t* s : {&sigterm_, &sigint_, &sighup_}) {
      uv_signal_init(&uv_, s);
      s->data = this;
    }
    uv_signal_start(&sigterm_, &InstanceServer::onSignal, SIGTERM);
    uv_signal_start(&sigint_, &InstanceServer::onSignal, SIGINT);
    uv_signal_start(&sighup_, &InstanceServer::onSignal, SIGHUP);
    common::Status started = session_->start();
    if (!started.ok()) {
      LOG_ERROR("cannot talk to the controller: %s", started.message().c_str());
      return 1;
    }
    uv_run(&uv_, UV_RUN_DEFAULT);
    if (loops_) loops_->join();
    return exit_code_;
  }

  common::Result<ipc::SandboxSummary> goLive(const InstancePlan& plan) override {
    std::vector<std::vector<ListenerSocket>> per_loop(plan.settings.loops);
    const auto& listens = plan.snapshot->site().listens;
    for (const InstanceListener& l : plan.listeners) {
      // The controller binds what the config lists; its index picks the TLS context.
      int index = -1;
      for (size_t i = 0; i < listens.size(); ++i) {
        if (listens[i].address == l.address && listens[i].port == l.port) {
          index = static_cast<int>(i);
          break;
        }
      }
      if (l.tls && index < 0) {
        return common::Status(common::StatusCode::kInvalidArgument,
                              "TLS listener " + l.address + " is not in the config");
      }
      ListenerSocket socket{l.fd.get(), l.port, l.tls, index};
      if (l.handoff && !l.quic) {
        if (index < 0) {
          return common::Status(common::StatusCode::kInvalidArgument,
                                "shared address " + l.address + " is not in the config");
        }
        socket.handoff = true;
        socket.shared_hosts = sharedHostsFor(plan.shared, l.address, l.port);
        socket.carries_datagrams = listens[static_cast<size_t>(index)].http3;
        handoff_listens_[index] = {l.address, l.port};
      }
      if (l.quic) {
        if (index < 0 || !listens[static_cast<size_t>(index)].http3) {
          return common::Status(
              common::StatusCode::kInvalidArgument,
              "UDP socket " + l.address + " has no HTTP/3 listener in the config");
        }
        socket.quic = true;
        if (l.handoff) {
          // A shared address's: the front passes datagrams on by the route our IDs carry.
          socket.front_routed = true;
          socket.quic_route =
              common::net::quicRouteOf(plan.settings.instance, plan.settings.slot, l.loop);
        } else {
          socket.steering_id = static_cast<uint16_t>(l.steering);
        }
      }
      per_loop[l.loop].push_back(socket);
    }
    // Metrics: a private area (one slot per loop) summed once a second by the sender, and
    // /proc/self/statm opened while /proc is still visible (Landlock hides it).
    common::Result<std::unique_ptr<MetricsArea>> area = MetricsArea::create(plan.settings.loops);
    if (!area.ok()) return area.status();
    metrics_area_ = std::move(area).value();
    process_stats_ = std::make_unique<ProcessStats>();
    // Before any loop thread exists: credentials and Landlock bind this thread and what it
    // starts afterwards. No config path: the worker never reads its config from disk.
    common::Result<sandbox::SandboxReport> report = enterSandbox(*plan.snapshot, "");
    if (!report.ok()) {
      return common::Status(report.status().code(), "sandbox: " + report.status().message());
    }
    allowance_ = connectAllowanceOf(*report, plan.snapshot->site());
    loops_ = std::make_unique<InstanceLoops>(&uv_, plan.snapshot, std::move(per_loop),
                                             metrics_area_.get(), process_stats_.get(),
                                             plan.access_log.get());
    loops_->start([this] { closeHandles(); });
    startMetricsTimer();
    LOG_INFO("instance %s: serving, slot %u, %zu loop(s)", plan.settings.instance.c_str(),
             plan.settings.slot, loops_->size());
    return summaryOf(*report);
  }

  void applySharedNames(const std::vector<ipc::SharedAddressNames>& shared) override {
    if (!loops_) return;
    for (const auto& [index, where] : handoff_listens_) {
      loops_->broadcastSharedHosts(index, sharedHostsFor(shared, where.first, where.second));
    }
  }

  void applySnapshot(std::shared_ptr<const ConfigSnapshot> snapshot,
                     std::function<void()> on_applied) override {
    if (!loops_) return on_applied();
    loops_->broadcastSnapshot(snapshot, std::move(on_applied));
  }

  common::Status admits(const ConfigSnapshot& next) override {
    return poolsFitSandbox(allowance_, next.site());
  }

  void stop() override {
    if (loops_) {
      loops_->shutdown();
    } else {
      closeHandles();
    }
  }

  void fail(const common::Status& status) override {
    LOG_ERROR("%s", status.message().c_str());
    exit_code_ = 1;
    if (loops_) {
      loops_->shutdown();  // serving already: drain, then go
    } else {
      closeHandles();
    }
  }

 private:
  static void onSignal(uv_signal_t* handle, int signum) {
    auto* self = static_cast<InstanceServer*>(handle->data);
    if (signum == SIGHUP) return;
    LOG_INFO("signal %d: stopping gracefully", signum);
    self->session_->requestStop();
  }

  // The sender: reads the loops' counters (relaxed loads from this thread, nothing on the
  // request path waits for it) and the process's CPU/RSS, and notifies the controller.
  void startMetricsTimer() {
    uv_timer_init(&uv_, &metrics_timer_);
    metrics_timer_.data = this;
    metrics_timer_started_ = true;
    uv_timer_start(
        &metrics_timer_,
        [](uv_timer_t* t) { static_cast<InstanceServer*>(t->data)->sendMetrics(); },
        kMetricsIntervalMs, kMetricsIntervalMs);
  }

  void sendMetrics() {
    if (metrics_area_ == nullptr) return;
    common::metrics::MetricsSnapshot s = metrics_area_->total();
    s.cpu_us = process_stats_->cpuMicros();
    s.rss_bytes = process_stats_->rssBytes();
    session_->sendMetrics(s, proxy::collectUpstreamStats());
  }

  void closeHandles() {
    if (closed_) return;
    closed_ = true;
    // The loops drained: the last figures, so a graceful stop loses no request's count.
    sendMetrics();
    if (metrics_timer_started_) {
      uv_close(reinterpret_cast<uv_handle_t*>(&metrics_timer_), nullptr);
    }
    session_->close();
    for (uv_signal_t* s : {&sigterm_, &sigint_, &sighup_}) {
      uv_close(reinterpret_cast<uv_handle_t*>(s), nullptr);
    }
  }

  uv_loop_t uv_{};
  uv_signal_t sigterm_{};
  uv_signal_t sigint_{};
  uv_signal_t sighup_{};
  std::unique_ptr<InstanceSession> session_;
  std::unique_ptr<InstanceLoops> loops_;
  std::unique_ptr<MetricsArea> metrics_area_;  // outlives the loops that write it
  std::unique_ptr<ProcessStats> process_stats_;
  uv_timer_t metrics_timer_{};
  bool metrics_timer_started_ = false;
  ConnectAllowance allowance_;  // fixed by the sandbox entered in goLive
  // The [[listen]] index of each shared address, with its address and port.
  std::map<int, std::pair<std::string, uint16_t>> handoff_listens_;
  int exit_code_ = 0;
  bool closed_ = false;
};

}  // namespace

int runInstanceWorker(const std::string& instance, int ipc_fd, int attach_fd) {
  common::log::setProgramName("scalwsd[" + instance + "]");
  InstanceServer server(instance, ipc_fd, attach_fd);
  return server.run();
}

}  // namespace scalws::worker
