#include "controller/worker_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "common/hex.h"
#include "common/log.h"
#include "controller/worker_probe.h"
#include "controller/worker_spawn.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using ipc::Json;

namespace {

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string_view modeName(common::config::WorkerMode mode) {
  return mode == common::config::WorkerMode::kSingle ? "single" : "multi";
}

template <typename Handle>
void closeAndDelete(Handle*& handle) {
  if (handle == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(handle),
           [](uv_handle_t* h) { delete reinterpret_cast<Handle*>(h); });
  handle = nullptr;
}

std::string describeWait(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (name != nullptr ? " (SIG" + std::string(name) + ")" : "");
  }
  return "ended";
}

}  // namespace

WorkerProcess::WorkerProcess(uv_loop_t* loop, pid_t pid, UniqueFd pidfd, Callbacks callbacks)
    : loop_(loop), pid_(pid), pidfd_(std::move(pidfd)), callbacks_(std::move(callbacks)) {
  started_wall_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
}

WorkerProcess::~WorkerProcess() {
  endpoint_.reset();
  closeAndDelete(pidfd_poll_);
  closeAndDelete(timer_);
}

std::string_view WorkerProcess::stateName() const {
  switch (state_) {
    case State::kAttaching:
      return "attaching";
    case State::kStarting:
      return "starting";
    case State::kReady:
      return "ready";
    case State::kStopping:
      return "stopping";
    case State::kExited:
      return "exited";
  }
  return "unknown";
}

Status WorkerProcess::watchExit() {
  pidfd_poll_ = new uv_poll_t;
  int rc = uv_poll_init(loop_, pidfd_poll_, pidfd_.get());
  if (rc != 0) {
    delete pidfd_poll_;
    pidfd_poll_ = nullptr;
    return common::internalError(std::string("uv_poll_init(pidfd): ") + uv_strerror(rc));
  }
  pidfd_poll_->data = this;
  uv_poll_start(pidfd_poll_, UV_READABLE, &WorkerProcess::onPidfd);
  return common::okStatus();
}

void WorkerProcess::armTimer(uint64_t ms, void (*fire)(WorkerProcess&)) {
  if (timer_ == nullptr) {
    timer_ = new uv_timer_t;
    uv_timer_init(loop_, timer_);
    timer_->data = this;
  }
  timer_fire_ = fire;
  uv_timer_start(
      timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<WorkerProcess*>(t->data);
        if (self->timer_fire_ != nullptr) self->timer_fire_(*self);
      },
      ms, 0);
}

// --- spawned workers ---------------------------------------------------------------------

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(uv_loop_t* loop, WorkerLaunch launch,
                                                            SlotListeners listeners,
                                                            Callbacks callbacks) {
  SpawnSpec spec{launch.scalwsd, launch.instance, launch.cpus};
  Result<SpawnedWorker> spawned = spawnWorker(spec);
  if (!spawned.ok()) return spawned.status();
  std::unique_ptr<WorkerProcess> w(
      new WorkerProcess(loop, spawned->pid, std::move(spawned->pidfd), std::move(callbacks)));
  w->is_child_ = true;
  w->slot_ = launch.slot;
  w->cpus_ = launch.cpus;
  w->state_ = State::kStarting;
  Result<uint64_t> ticks = processStartTicks(w->pid_);
  w->start_ticks_ = ticks.ok() ? *ticks : 0;
  w->launch_ = std::move(launch);
  w->listeners_ = std::move(listeners);
  ipc::EndpointOptions options;  // controller <-> worker
  Result<std::unique_ptr<ipc::Endpoint>> endpoint =
      ipc::Endpoint::create(loop, std::move(spawned->channel), options);
  Status watching = endpoint.ok() ? w->watchExit() : endpoint.status();
  if (!watching.ok()) {
    ::kill(w->pid_, SIGKILL);
    ::waitpid(w->pid_, nullptr, 0);
    return watching;
  }
  w->endpoint_ = std::move(endpoint).value();
  w->registerSpawnHandlers();
  w->armTimer(kReadyTimeoutMs, [](WorkerProcess& self) {
    self.failStart("not ready within " + std::to_string(kReadyTimeoutMs / 1000) + " s");
  });
  return w;
}

void WorkerProcess::registerSpawnHandlers() {
  Status ok = endpoint_->registerHandler(
      "hello", [this](const ipc::Message& m, std::vector<UniqueFd>, ipc::Replier r) {
        onSpawnHello(m, std::move(r));
      });
  ok = endpoint_->registerHandler("ready", [this](const ipc::Message& m, std::vector<UniqueFd>,
                                                  ipc::Replier r) { onReady(m, std::move(r)); });
  (void)ok;  // both are worker -> controller ops in the table
  registerMetricsHandler();
  // A channel that closes before ready is followed by the exit, which says more.
  endpoint_->onClose([](const Status&) {});
}

void WorkerProcess::onSpawnHello(const ipc::Message& request, ipc::Replier replier) {
  if (state_ != State::kStarting || !attach_address_.empty()) {
    return replier.fail(ipc::errc::kFailed, "hello was already said");
  }
  Result<std::string> instance = ipc::stringField(request.args, "instance");
  if (!instance.ok() || *instance != launch_.instance) {
    replier.fail(ipc::errc::kInvalidArgument, "this channel is for instance " + launch_.instance);
    return failStart("said hello as another instance");
  }
  Result<std::string> address = ipc::stringField(request.args, "attach_address");
  attach_address_ = address.ok() ? *address : "";
  replier.ok();
  if (callbacks_.on_hello) callbacks_.on_hello(*this);
  sendConfig();
}

void WorkerProcess::sendConfig() {
  Json args = {{"instance", launch_.instance},
               {"slot", launch_.slot},
               {"mode", modeName(launch_.mode)},
               {"loops", launch_.loops},
               {"cpus", launch_.cpus.toString()},
               {"user", launch_.user},
               {"config", launch_.config},
               {"config_path", launch_.config_path},
               {"php_pools", ipc::phpPoolGrantsJson(launch_.php_pools)},
               {"controller_uid", static_cast<uint64_t>(::geteuid())}};
  if (!launch_.tls_ticket_secret.empty()) {
    args["tls_ticket_secret"] = common::toHex(launch_.tls_ticket_secret);
  }
  Status sent = endpoint_->request("config", std::move(args), {}, [this](Result<Json> reply) {
    if (!reply.ok()) return failStart("refused its config: " + reply.status().message());
    sendListeners();
  });
  if (!sent.ok()) failStart("cannot send the config: " + sent.message());
}

void WorkerProcess::sendListeners() {
  Json args = listeners_.toJson();
  std::vector<UniqueFd> fds = std::move(listeners_.fds);
  listeners_.fds.clear();
  Status sent =
      endpoint_->request("listeners", std::move(args), std::move(fds), [this](Result<Json> reply) {
        if (!reply.ok()) failStart("refused its listeners: " + reply.status().message());
      });
  if (!sent.ok()) failStart("cannot send the listeners: " + sent.message());
}

void WorkerProcess::onReady(const ipc::Message& request, ipc::Replier replier) {
  replier.ok();
  if (state_ != State::kStarting) return;
  Result<bool> ok = ipc::boolField(request.args, "ok");
  if (!ok.ok() || !*ok) {
    Result<std::string> error = ipc::stringField(request.args, "error");
    return failStart(error.ok() ? *error : "said it is not ready");
  }
  state_ = State::kReady;
  if (auto it = request.args.find("sandbox"); it != request.args.end() && it->is_object()) {
    sandbox_ = *it;
  }
  if (timer_ != nullptr) uv_timer_stop(timer_);
  reportReady(common::okStatus());
}

void WorkerProcess::failStart(const std::string& reason) {
  if (ready_reported_) return;
  LOG_ERROR("instance %s: worker %u (pid %d): %s", launch_.instance.c_str(), slot_,
            static_cast<int>(pid_), reason.c_str());
  if (state_ != State::kExited) {
    state_ = State::kStopping;
    ::kill(pid_, SIGKILL);  // not serving yet: nothing to drain
  }
  reportReady(Status(StatusCode::kFailedPrecondition, reason));
}

void WorkerProcess::reportReady(const Status& status) {
  if (ready_reported_) return;
  ready_reported_ = true;
  if (callbacks_.on_ready) callbacks_.on_ready(*this, status);
}

// --- attached workers --------------------------------------------------------------------

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::attach(uv_loop_t* loop,
                                                             const state::WorkerRecord& record,
                                                             Callbacks callbacks) {
  pid_t pid = static_cast<pid_t>(record.pid);
  Result<uint64_t> ticks = processStartTicks(pid);
  if (!ticks.ok()) return ticks.status();
  if (*ticks != record.start_ticks || !runsWorkerOf(pid, record.instance)) {
    return common::notFound("pid " + std::to_string(pid) + " is no longer a worker of " +
                            record.instance);
  }
  Result<UniqueFd> pidfd = openPidfd(pid);
  if (!pidfd.ok()) return pidfd.status();
  // Checked again with the pidfd held: it pins this process, so a PID reused after this
  // point cannot be mistaken for it.
  Result<uint64_t> again = processStartTicks(pid);
  if (!again.ok() || *again != record.start_ticks) {
    return common::notFound("pid " + std::to_string(pid) + " exited");
  }
  Result<UniqueFd> channel = connectAttachSocket(record.attach_address, pid);

  std::unique_ptr<WorkerProcess> w(
      new WorkerProcess(loop, pid, std::move(*pidfd), std::move(callbacks)));
  w->state_ = State::kAttaching;
  w->slot_ = record.slot;
  w->start_ticks_ = record.start_ticks;
  w->attach_address_ = record.attach_address;
  w->launch_.instance = record.instance;
  w->started_wall_ms_ = record.started_ms;
  int64_t age = wallMs() - record.started_ms;
  uint64_t now = uv_now(loop);
  w->started_mono_ms_ = age > 0 && static_cast<uint64_t>(age) < now ? now - age : 0;
  SCALWS_RETURN_IF_ERROR(w->watchExit());
  if (!channel.ok()) {
    // Ours (the checks above passed) but unreachable: the owner hears it from on_ready,
    // on the next loop turn, and stops it.
    w->attach_error_ = channel.status().message();
    w->armTimer(0, [](WorkerProcess& self) {
      self.reportReady(Status(StatusCode::kUnavailable, self.attach_error_));
    });
    return w;
  }
  ipc::EndpointOptions options;
  Result<std::unique_ptr<ipc::Endpoint>> endpoint =
      ipc::Endpoint::create(loop, std::move(*channel), options);
  if (!endpoint.ok()) return endpoint.status();
  w->endpoint_ = std::move(endpoint).value();
  w->registerAttachHandlers();
  w->armTimer(kAttachTimeoutMs, [](WorkerProcess& self) {
    self.reportReady(Status(StatusCode::kTimeout, "no hello on the attach socket"));
  });
  return w;
}

void WorkerProcess::registerAttachHandlers() {
  Status ok = endpoint_->registerHandler(
      "hello", [this](const ipc::Message& m, std::vector<UniqueFd>, ipc::Replier r) {
        onAttachHello(m, std::move(r));
      });
  (void)ok;
  registerMetricsHandler();
  endpoint_->onClose([this](const Status& why) {
    if (state_ == State::kAttaching) {
      reportReady(Status(StatusCode::kUnavailable, "the worker closed the attach channel" +
                                                       (why.ok() ? "" : ": " + why.message())));
    }
  });
}

void WorkerProcess::onAttachHello(const ipc::Message& request, ipc::Replier replier) {
  if (state_ != State::kAttaching) return replier.fail(ipc::errc::kFailed, "already attached");
  const Json& a = request.args;
  auto bad = [&](const std::string& why) {
    replier.fail(ipc::errc::kInvalidArgument, why);
    reportReady(common::invalidArgument("attach hello: " + why));
  };
  Result<bool> attached = ipc::boolField(a, "attached");
  Result<std::string> instance = ipc::stringField(a, "instance");
  Result<uint64_t> pid = ipc::uintField(a, "pid");
  if (!attached.ok() || !*attached || !instance.ok() || *instance != launch_.instance ||
      !pid.ok() || static_cast<pid_t>(*pid) != pid_) {
    return bad("not the worker this record names");
  }
  Result<uint64_t> slot = ipc::uintField(a, "slot");
  Result<std::string> state = ipc::stringField(a, "state");
  Result<std::string> mode = ipc::stringField(a, "mode");
  Result<uint64_t> loops = ipc::uintField(a, "loops");
  Result<std::string> cpus = ipc::stringField(a, "cpus");
  Result<std::string> user = ipc::stringField(a, "user");
  Result<std::string> config = ipc::stringField(a, "config");
  Result<std::string> config_path = ipc::stringField(a, "config_path");
  auto listeners = a.find("listeners");
  if (!slot.ok() || !state.ok() || !mode.ok() || !loops.ok() || *loops == 0 || !cpus.ok() ||
      !user.ok() || !config.ok() || !config_path.ok() || listeners == a.end() ||
      !listeners->is_array()) {
    return bad("fields missing");
  }
  Result<common::CpuSet> cpu_set = common::parseCpuList(*cpus);
  if (!cpu_set.ok()) return bad(cpu_set.status().message());
  Result<std::vector<ipc::PhpPoolGrant>> php_pools = ipc::parsePhpPoolGrants(a);
  if (!php_pools.ok()) return bad(php_pools.status().message());
  AttachedState s;
  s.slot = static_cast<uint32_t>(*slot);
  s.stopping = *state == "stopping";
  s.mode =
      *mode == "single" ? common::config::WorkerMode::kSingle : common::config::WorkerMode::kMulti;
  s.loops = static_cast<uint32_t>(*loops);
  s.cpus = *cpu_set;
  s.user = *user;
  s.config = *config;
  s.config_path = *config_path;
  s.php_pools = std::move(php_pools).value();
  // Copies of its listeners, so a crash of this worker does not take its queue along.
  bool complete = true;
  for (const Json& l : *listeners) {
    Result<uint64_t> loop = ipc::uintField(l, "loop");
    Result<std::string> address = ipc::stringField(l, "address");
    Result<uint64_t> port = ipc::uintField(l, "port");
    Result<bool> tls = ipc::boolField(l, "tls");
    Result<uint64_t> fd = ipc::uintField(l, "fd");
    if (!loop.ok() || !address.ok() || !port.ok() || !tls.ok() || !fd.ok()) {
      complete = false;
      break;
    }
    Result<UniqueFd> copy = copyFdOf(pidfd_.get(), static_cast<int>(*fd));
    if (!copy.ok() || boundPort(copy->get()) != *port) {
      LOG_WARN("instance %s: cannot take listener %s of pid %d (%s); a replacement will bind anew",
               launch_.instance.c_str(), address->c_str(), static_cast<int>(pid_),
               copy.ok() ? "port mismatch" : copy.status().message().c_str());
      complete = false;
      break;
    }
    ListenerSpec spec{static_cast<uint32_t>(*loop), *address, static_cast<uint16_t>(*port), *tls};
    // Absent in a worker without HTTP/3: a TCP listener.
    spec.quic = l.value("quic", false);
    spec.steering = l.value("steering", 0u);
    s.listeners.specs.push_back(std::move(spec));
    s.listeners.fds.push_back(std::move(*copy));
  }
  if (!complete) s.listeners = SlotListeners();
  slot_ = s.slot;
  cpus_ = s.cpus;
  attached_ = std::move(s);
  state_ = attached_.stopping ? State::kStopping : State::kReady;
  if (timer_ != nullptr) uv_timer_stop(timer_);
  endpoint_->onClose([](const Status&) {});
  replier.ok();
  reportReady(common::okStatus());
}

// --- both --------------------------------------------------------------------------------

void WorkerProcess::registerMetricsHandler() {
  Status ok = endpoint_->registerHandler(
      "metrics",
      [this](const ipc::Message& m, std::vector<UniqueFd>, ipc::Replier) { onMetrics(m); });
  (void)ok;  // a worker -> controller notification in the table
}

// args: {pid, slot, metrics: MetricsSnapshot as common/metrics toJson writes it, and
// optionally upstreams: [UpstreamMetrics] likewise}.
void WorkerProcess::onMetrics(const ipc::Message& notification) {
  // Before ready (or an attach hello) the worker is not yet known to be this one.
  if (state_ != State::kReady && state_ != State::kStopping) return;
  auto it = notification.args.find("metrics");
  Result<common::metrics::MetricsSnapshot> s =
      it == notification.args.end() ? Result<common::metrics::MetricsSnapshot>(
                                          common::invalidArgument("metrics: no \"metrics\""))
                                    : common::metrics::metricsFromJson(*it);
  Result<std::vector<common::metrics::UpstreamMetrics>> upstreams =
      std::vector<common::metrics::UpstreamMetrics>{};
  if (auto u = notification.args.find("upstreams"); s.ok() && u != notification.args.end()) {
    upstreams = common::metrics::upstreamMetricsFromJson(*u);
    if (!upstreams.ok()) s = upstreams.status();
  }
  if (!s.ok()) {
    if (!bad_metrics_logged_) {
      LOG_WARN("instance %s: worker pid %d sent bad metrics (dropped): %s",
               launch_.instance.c_str(), static_cast<int>(pid_), s.status().message().c_str());
    }
    bad_metrics_logged_ = true;
    return;
  }
  if (callbacks_.on_metrics) callbacks_.on_metrics(*this, *s, std::move(upstreams).value());
}

void WorkerProcess::stop(uint64_t kill_after_ms) {
  if (state_ == State::kExited) return;
  bool attaching = state_ == State::kAttaching;
  state_ = State::kStopping;
  bool asked = false;
  if (endpoint_ && endpoint_->isOpen() && !attaching) {
    asked = endpoint_->request("stop", Json::object(), {}, [](Result<Json>) {}).ok();
  }
  if (!asked) ::kill(pid_, SIGTERM);
  armTimer(kill_after_ms, [](WorkerProcess& self) {
    if (self.state_ == State::kExited) return;
    LOG_WARN("instance %s: worker pid %d did not stop in time; killing it",
             self.launch_.instance.c_str(), static_cast<int>(self.pid_));
    ::kill(self.pid_, SIGKILL);
  });
}

void WorkerProcess::kill() {
  if (state_ == State::kExited) return;
  state_ = State::kStopping;
  ::kill(pid_, SIGKILL);
}

void WorkerProcess::reload(const std::string& config, const std::string& config_path,
                           const std::vector<ipc::PhpPoolGrant>& php_pools,
                           std::function<void(const Status&)> done) {
  if (!endpoint_ || !endpoint_->isOpen() || state_ != State::kReady) {
    return done(Status(StatusCode::kUnavailable,
                       "worker pid " + std::to_string(pid_) + " is not ready for a reload"));
  }
  Json args = {{"config", config},
               {"config_path", config_path},
               {"php_pools", ipc::phpPoolGrantsJson(php_pools)}};
  Status sent = endpoint_->request("reload", std::move(args), {},
                                   [done](Result<Json> reply) { done(reply.status()); });
  if (!sent.ok()) done(sent);
}

void WorkerProcess::detach() {
  endpoint_.reset();
  closeAndDelete(pidfd_poll_);
  closeAndDelete(timer_);
}

void WorkerProcess::onPidfd(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<WorkerProcess*>(handle->data);
  (void)status;  // an error on a pidfd means the process is gone as well
  self->onProcessExit();
}

void WorkerProcess::onProcessExit() {
  if (exit_reported_) return;
  std::string how = "exited";
  if (is_child_) {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return;  // not yet reapable; the pidfd stays readable
    if (r == pid_) how = describeWait(status);
  }
  exit_reported_ = true;
  State before = state_;
  state_ = State::kExited;
  closeAndDelete(pidfd_poll_);
  closeAndDelete(timer_);
  endpoint_.reset();
  if (before == State::kStarting || before == State::kAttaching) {
    reportReady(Status(StatusCode::kFailedPrecondition, how + " before it was ready"));
  }
  if (callbacks_.on_exit) callbacks_.on_exit(*this, how);
}

}  // namespace scalws::controller
