#include "controller/instances/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/log.h"
#include "common/printable.h"
#include "controller/child_process.h"
#include "controller/instances/worker_probe.h"
#include "controller/shared/handoff_channel.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using ipc::Json;

const ipc::OpHandler<WorkerProcess> WorkerProcess::kSpawnHandlers[] = {
    {ipc::op::kHello, &WorkerProcess::onSpawnHello},
    {ipc::op::kReady, &WorkerProcess::onReady},
    {ipc::op::kMetrics, &WorkerProcess::onMetrics},
};

const ipc::OpHandler<WorkerProcess> WorkerProcess::kAttachHandlers[] = {
    {ipc::op::kHello, &WorkerProcess::onAttachHello},
    {ipc::op::kMetrics, &WorkerProcess::onMetrics},
};

WorkerProcess::WorkerProcess(uv_loop_t* loop, pid_t pid, UniqueFd pidfd, Callbacks callbacks)
    : loop_(loop),
      pid_(pid),
      pidfd_(std::move(pidfd)),
      callbacks_(std::move(callbacks)),
      exit_watch_(loop),
      timer_(loop) {
  started_wall_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
}

WorkerProcess::~WorkerProcess() {
  endpoint_.reset();
}

std::string_view WorkerProcess::stateName() const {
  // In State's order.
  static constexpr std::string_view kNames[] = {"attaching", "starting", "ready", "stopping",
                                                "exited"};
  return kNames[static_cast<size_t>(state_)];
}

Status WorkerProcess::watchExit() {
  int rc = exit_watch_.start(pidfd_.get(), [this] { onProcessExit(); });
  if (rc != 0) return common::internalError(std::string("uv_poll_init(pidfd): ") + uv_strerror(rc));
  return common::okStatus();
}

// --- spawned workers ---------------------------------------------------------------------

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(uv_loop_t* loop, WorkerLaunch launch,
                                                            SlotListeners listeners,
                                                            Callbacks callbacks) {
  SpawnSpec spec{launch.scalwsd, launch.settings.instance, launch.settings.cpus};
  Result<SpawnedWorker> spawned = spawnWorker(spec);
  if (!spawned.ok()) return spawned.status();
  return converse(loop, std::move(spawned).value(), std::move(launch), std::move(listeners),
                  std::move(callbacks));
}

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::converse(uv_loop_t* loop, SpawnedWorker child,
                                                               WorkerLaunch launch,
                                                               SlotListeners listeners,
                                                               Callbacks callbacks) {
  std::unique_ptr<WorkerProcess> w(
      new WorkerProcess(loop, child.pid, std::move(child.pidfd), std::move(callbacks)));
  w->is_child_ = true;
  w->slot_ = launch.settings.slot;
  w->cpus_ = launch.settings.cpus;
  w->state_ = State::kStarting;
  Result<uint64_t> ticks = processStartTicks(w->pid_);
  w->start_ticks_ = ticks.ok() ? *ticks : 0;
  w->launch_ = std::move(launch);
  w->listeners_ = std::move(listeners);
  if (child.log) w->readLog(std::move(child.log));
  ipc::EndpointOptions options;  // controller <-> worker
  Result<std::unique_ptr<ipc::Endpoint>> endpoint =
      ipc::Endpoint::create(loop, std::move(child.channel), options);
  Status watching = endpoint.ok() ? w->watchExit() : endpoint.status();
  if (watching.ok()) {
    w->endpoint_ = std::move(endpoint).value();
    watching = ipc::registerHandlers<WorkerProcess>(*w->endpoint_, *w, kSpawnHandlers);
  }
  if (!watching.ok()) {
    ::kill(w->pid_, SIGKILL);
    ::waitpid(w->pid_, nullptr, 0);
    return watching;
  }
  // A channel that closes before ready is followed by the exit, which says more.
  w->endpoint_->onClose([](const Status&) {});
  uint64_t timeout = w->launch_.ready_timeout_ms;
  WorkerProcess* self = w.get();
  w->timer_.start(timeout, 0, [self, timeout] {
    self->failStart("not ready within " + std::to_string(timeout / 1000) + " s");
  });
  return w;
}

void WorkerProcess::onSpawnHello(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kStarting || !attach_address_.empty()) {
    return replier.fail(ipc::errc::kFailed, "hello was already said");
  }
  Result<ipc::HelloArgs> hello = ipc::HelloArgs::decode(request.args());
  const std::string& instance = launch_.settings.instance;
  if (!hello.ok() || hello->instance != instance || hello->attached) {
    replier.fail(ipc::errc::kInvalidArgument, "this channel is for instance " + instance);
    return failStart("said hello as another instance");
  }
  attach_address_ = hello->attach_address;
  replier.ok();
  if (callbacks_.on_hello) callbacks_.on_hello(*this);
  sendConfig();
}

void WorkerProcess::sendConfig() {
  ipc::ConfigArgs config;
  config.settings = launch_.settings;
  config.controller_uid = ::geteuid();
  config.tls_ticket_secret = launch_.tls_ticket_secret;
  Status sent =
      endpoint_->request(ipc::op::kConfig, config.encode(), {}, [this](Result<Json> reply) {
        if (!reply.ok()) return failStart("refused its config: " + reply.status().message());
        sendListeners();
      });
  if (!sent.ok()) failStart("cannot send the config: " + sent.message());
}

void WorkerProcess::sendListeners() {
  ipc::ListenersArgs args{listeners_.specs, launch_.cache_names, launch_.shared_names};
  std::vector<UniqueFd> fds = std::move(listeners_.fds);
  listeners_.fds.clear();
  for (UniqueFd& fd : launch_.cache_fds) fds.push_back(std::move(fd));
  launch_.cache_fds.clear();
  if (launch_.access_log.valid()) {
    args.access_log = true;
    fds.push_back(std::move(launch_.access_log));
  }
  Status sent = endpoint_->request(
      ipc::op::kListeners, args.encode(), std::move(fds), [this](Result<Json> reply) {
        if (!reply.ok()) {
          failStart("refused its listeners: " + reply.status().message());
        }
      });
  if (!sent.ok()) failStart("cannot send the listeners: " + sent.message());
}

void WorkerProcess::onReady(ipc::Incoming& request, ipc::Replier replier) {
  replier.ok();
  if (state_ != State::kStarting) return;
  Result<ipc::ReadyArgs> ready = ipc::ReadyArgs::decode(request.args());
  if (!ready.ok()) return failStart("sent a malformed ready: " + ready.status().message());
  // The worker's own words: escaped before they reach a log line or the DB.
  if (!ready->ok) return failStart(common::printable(ready->error));
  state_ = State::kReady;
  sandbox_ = std::move(ready->sandbox);
  timer_.stop();
  reportReady(common::okStatus());
}

void WorkerProcess::failStart(const std::string& reason) {
  if (ready_reported_) return;
  LOG_ERROR("instance %s: worker %u (pid %d): %s", launch_.settings.instance.c_str(), slot_,
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
  w->recorded_digest_ = record.launch_digest;
  w->launch_.settings.instance = record.instance;
  w->started_wall_ms_ = record.started_ms;
  int64_t age = wallMs() - record.started_ms;
  uint64_t now = uv_now(loop);
  w->started_mono_ms_ = age > 0 && static_cast<uint64_t>(age) < now ? now - age : 0;
  SCALWS_RETURN_IF_ERROR(w->watchExit());
  WorkerProcess* self = w.get();
  if (!channel.ok()) {
    // Ours (the checks above passed) but unreachable: the owner hears it from on_ready,
    // on the next loop turn, and stops it.
    std::string why = channel.status().message();
    w->timer_.start(0, 0,
                    [self, why] { self->reportReady(Status(StatusCode::kUnavailable, why)); });
    return w;
  }
  ipc::EndpointOptions options;
  Result<std::unique_ptr<ipc::Endpoint>> endpoint =
      ipc::Endpoint::create(loop, std::move(*channel), options);
  if (!endpoint.ok()) return endpoint.status();
  w->endpoint_ = std::move(endpoint).value();
  SCALWS_RETURN_IF_ERROR(ipc::registerHandlers<WorkerProcess>(*w->endpoint_, *w, kAttachHandlers));
  w->endpoint_->onClose([self](const Status& why) {
    if (self->state_ == State::kAttaching) {
      self->reportReady(
          Status(StatusCode::kUnavailable,
                 "the worker closed the attach channel" + (why.ok() ? "" : ": " + why.message())));
    }
  });
  w->timer_.start(kAttachTimeoutMs, 0, [self] {
    self->reportReady(Status(StatusCode::kTimeout, "no hello on the attach socket"));
  });
  return w;
}

void WorkerProcess::onAttachHello(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kAttaching) return replier.fail(ipc::errc::kFailed, "already attached");
  auto bad = [&](const std::string& why) {
    replier.fail(ipc::errc::kInvalidArgument, why);
    reportReady(common::invalidArgument("attach hello: " + why));
  };
  Result<ipc::HelloArgs> hello = ipc::HelloArgs::decode(request.args());
  if (!hello.ok()) return bad(hello.status().message());
  if (!hello->attached || hello->instance != launch_.settings.instance || hello->pid != pid_ ||
      hello->attached->settings.instance != launch_.settings.instance) {
    return bad("not the worker this record names");
  }
  ipc::HelloArgs::Attached& a = *hello->attached;
  AttachedState s;
  s.stopping = a.stopping;
  s.settings = std::move(a.settings);
  s.caches = std::move(a.caches);
  // Copies of its listeners, so a crash of this worker does not take its queue along.
  Result<SlotListeners> copies = copyListeners(a.listeners);
  if (copies.ok()) {
    s.listeners = std::move(copies).value();
  } else {
    LOG_WARN("instance %s: cannot take the listeners of pid %d (%s); a replacement will bind anew",
             launch_.settings.instance.c_str(), static_cast<int>(pid_),
             copies.status().message().c_str());
  }
  slot_ = s.settings.slot;
  cpus_ = s.settings.cpus;
  attached_ = std::move(s);
  state_ = attached_.stopping ? State::kStopping : State::kReady;
  timer_.stop();
  endpoint_->onClose([](const Status&) {});
  replier.ok();
  handOverLog();
  reportReady(common::okStatus());
}

// Its old stdout and stderr went with the controller that died (writes there fail with
// EPIPE, which the worker ignores): a new pipe, read here.
void WorkerProcess::handOverLog() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    LOG_WARN("instance %s: no log pipe for pid %d: %s", launch_.settings.instance.c_str(),
             static_cast<int>(pid_), std::strerror(errno));
    return;
  }
  UniqueFd read_end(fds[0]);
  std::vector<UniqueFd> handed;
  handed.emplace_back(fds[1]);
  std::string instance = launch_.settings.instance;
  pid_t pid = pid_;
  Status sent = endpoint_->request(
      ipc::op::kStderr, Json::object(), std::move(handed), [instance, pid](Result<Json> reply) {
        if (reply.ok()) return;
        LOG_WARN("instance %s: pid %d kept its old stderr: %s", instance.c_str(),
                 static_cast<int>(pid), reply.status().message().c_str());
      });
  if (sent.ok()) readLog(std::move(read_end));
}

void WorkerProcess::readLog(UniqueFd read_end) {
  std::function<void(const std::string&)> copy = callbacks_.on_log_line;
  log_ = std::make_unique<WorkerLog>(
      loop_, "instance " + launch_.settings.instance + " worker " + std::to_string(pid_) + ": ",
      [copy](const std::string& line) {
        LOG_INFO("%s", line.c_str());
        if (copy) copy(line);
      });
  Status started = log_->start(std::move(read_end));
  if (!started.ok()) {
    LOG_WARN("instance %s: not reading the log of pid %d: %s", launch_.settings.instance.c_str(),
             static_cast<int>(pid_), started.message().c_str());
    log_.reset();
  }
}

Result<SlotListeners> WorkerProcess::copyListeners(
    const std::vector<ipc::ListenerReport>& reported) {
  SlotListeners out;
  for (const ipc::ListenerReport& l : reported) {
    Result<UniqueFd> copy = copyFdOf(pidfd_.get(), l.fd);
    if (!copy.ok()) return copy.status();
    if (l.spec.handoff) {
      // A channel end: paired by the kernel's name later (controller/shared/), or refused.
      if (!isChannelEnd(copy->get())) {
        return common::invalidArgument("listener " + l.spec.address + ": not a channel");
      }
    } else if (boundPort(copy->get()) != l.spec.port) {
      return common::invalidArgument("listener " + l.spec.address + ": port mismatch");
    }
    out.specs.push_back(l.spec);
    out.fds.push_back(std::move(*copy));
  }
  return out;
}

// --- both --------------------------------------------------------------------------------

void WorkerProcess::onMetrics(ipc::Incoming& request, ipc::Replier) {
  // Before ready (or an attach hello) the worker is not yet known to be this one.
  if (state_ != State::kReady && state_ != State::kStopping) return;
  if (request.message.wire_bytes > kMaxMetricsBytes) {
    return dropMetrics(std::to_string(request.message.wire_bytes) + " bytes, over " +
                       std::to_string(kMaxMetricsBytes));
  }
  if (!metrics_rate_.take(uv_now(loop_))) {
    return dropMetrics("more than " + std::to_string(static_cast<int>(kMetricsPerSecond)) +
                       " a second");
  }
  Result<ipc::MetricsArgs> m = ipc::MetricsArgs::decode(request.args());
  if (!m.ok()) return dropMetrics(m.status().message());
  if (callbacks_.on_metrics) callbacks_.on_metrics(*this, std::move(m).value());
}

void WorkerProcess::dropMetrics(const std::string& why) {
  if (bad_metrics_logged_) return;
  bad_metrics_logged_ = true;
  LOG_WARN("instance %s: worker pid %d sent bad metrics (dropped, said once): %s",
           launch_.settings.instance.c_str(), static_cast<int>(pid_), why.c_str());
}

void WorkerProcess::stop(uint64_t kill_after_ms) {
  if (state_ == State::kExited) return;
  bool attaching = state_ == State::kAttaching;
  state_ = State::kStopping;
  bool asked = false;
  if (endpoint_ && endpoint_->isOpen() && !attaching) {
    asked = endpoint_->request(ipc::op::kStop, Json::object(), {}, [](Result<Json>) {}).ok();
  }
  if (!asked) ::kill(pid_, SIGTERM);
  timer_.start(kill_after_ms, 0, [this] {
    if (state_ == State::kExited) return;
    LOG_WARN("instance %s: worker pid %d did not stop in time; killing it",
             launch_.settings.instance.c_str(), static_cast<int>(pid_));
    ::kill(pid_, SIGKILL);
  });
}

void WorkerProcess::kill() {
  if (state_ == State::kExited) return;
  state_ = State::kStopping;
  ::kill(pid_, SIGKILL);
}

void WorkerProcess::reload(const ipc::ReloadArgs& args, std::function<void(const Status&)> done) {
  if (!endpoint_ || !endpoint_->isOpen() || state_ != State::kReady) {
    return done(Status(StatusCode::kUnavailable,
                       "worker pid " + std::to_string(pid_) + " is not ready for a reload"));
  }
  Status sent = endpoint_->request(ipc::op::kReload, args.encode(), {},
                                   [this, args, done](Result<Json> reply) {
                                     if (reply.ok()) {
                                       launch_.settings.config = args.config;
                                       launch_.settings.config_path = args.config_path;
                                       launch_.settings.php_pools = args.php_pools;
                                       launch_.settings.apps = args.apps;
                                     }
                                     done(reply.status());
                                   });
  if (!sent.ok()) done(sent);
}

void WorkerProcess::sendSharedNames(const std::vector<ipc::SharedAddressNames>& names) {
  if (!endpoint_ || !endpoint_->isOpen() || state_ != State::kReady) return;
  ipc::Json args = ipc::Json::object();
  ipc::sharedNamesInto(names, args);
  std::string instance = launch_.settings.instance;
  pid_t pid = pid_;
  Status sent = endpoint_->request(
      ipc::op::kSharedNames, std::move(args), {}, [instance, pid](Result<Json> reply) {
        if (reply.ok()) return;
        LOG_WARN("instance %s: worker pid %d did not take the shared names: %s", instance.c_str(),
                 static_cast<int>(pid), reply.status().message().c_str());
      });
  if (!sent.ok()) {
    LOG_WARN("instance %s: cannot send the shared names to pid %d: %s", instance.c_str(),
             static_cast<int>(pid), sent.message().c_str());
  }
}

void WorkerProcess::reopenLogs(UniqueFd access_log, std::function<void(const Status&)> done) {
  if (!endpoint_ || !endpoint_->isOpen() || state_ != State::kReady) {
    return done(
        Status(StatusCode::kUnavailable, "worker pid " + std::to_string(pid_) + " is not serving"));
  }
  std::vector<UniqueFd> fds;
  if (access_log.valid()) fds.push_back(std::move(access_log));
  Status sent = endpoint_->request(ipc::op::kReopenLogs, Json::object(), std::move(fds),
                                   [done](Result<Json> reply) { done(reply.status()); });
  if (!sent.ok()) done(sent);
}

void WorkerProcess::purgeCache(const ipc::CachePurge& purge,
                               std::function<void(Result<ipc::CachePurgeResult>)> done) {
  if (!endpoint_ || !endpoint_->isOpen() || state_ != State::kReady) {
    return done(
        Status(StatusCode::kUnavailable, "worker pid " + std::to_string(pid_) + " is not serving"));
  }
  Status sent =
      endpoint_->request(ipc::op::kCachePurge, purge.encode(), {}, [done](Result<Json> reply) {
        if (!reply.ok()) return done(reply.status());
        done(ipc::CachePurgeResult::decode(*reply));
      });
  if (!sent.ok()) done(sent);
}

Result<InstanceCaches> WorkerProcess::cacheAreas(const common::config::SiteConfig& site) const {
  return InstanceCaches::adoptFrom(pidfd_.get(), attached_.caches, site);
}

void WorkerProcess::detach() {
  endpoint_.reset();
  exit_watch_.close();
  timer_.close();
}

void WorkerProcess::onProcessExit() {
  if (exit_reported_) return;
  std::optional<std::string> ended = reapExited(pid_, is_child_);
  if (!ended) return;  // not yet reapable; the pidfd stays readable
  std::string how = std::move(*ended);
  exit_reported_ = true;
  State before = state_;
  state_ = State::kExited;
  exit_watch_.close();
  timer_.close();
  endpoint_.reset();
  if (log_) log_->close();  // its last words, before the exit is reported
  if (before == State::kStarting || before == State::kAttaching) {
    reportReady(Status(StatusCode::kFailedPrecondition, how + " before it was ready"));
  }
  if (callbacks_.on_exit) callbacks_.on_exit(*this, how);
}

}  // namespace scalws::controller
