#include "controller/shared/front_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/printable.h"
#include "controller/child_process.h"
#include "controller/deferred_call.h"
#include "controller/instances/worker_probe.h"
#include "controller/instances/worker_spawn.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using ipc::Json;

namespace {

constexpr uint64_t kFrontAttachTimeoutMs = 3'000;
constexpr size_t kMaxFrontMetricsBytes = 64 * 1024;

}  // namespace

const ipc::OpHandler<FrontProcess> FrontProcess::kSpawnHandlers[] = {
    {ipc::op::kFrontHello, &FrontProcess::onSpawnHello},
    {ipc::op::kFrontReady, &FrontProcess::onReady},
    {ipc::op::kFrontMetrics, &FrontProcess::onMetrics},
};

const ipc::OpHandler<FrontProcess> FrontProcess::kAttachHandlers[] = {
    {ipc::op::kFrontHello, &FrontProcess::onAttachHello},
    {ipc::op::kFrontMetrics, &FrontProcess::onMetrics},
};

FrontProcess::FrontProcess(uv_loop_t* loop, pid_t pid, UniqueFd pidfd, std::string address,
                           Callbacks callbacks)
    : loop_(loop),
      pid_(pid),
      pidfd_(std::move(pidfd)),
      address_(std::move(address)),
      callbacks_(std::move(callbacks)),
      exit_watch_(loop),
      timer_(loop) {
  started_wall_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
}

FrontProcess::~FrontProcess() {
  endpoint_.reset();
}

std::string_view FrontProcess::stateName() const {
  static constexpr std::string_view kNames[] = {"attaching", "starting", "ready", "stopping",
                                                "exited"};
  return kNames[static_cast<size_t>(state_)];
}

Status FrontProcess::watchExit() {
  int rc = exit_watch_.start(pidfd_.get(), [this] { onProcessExit(); });
  if (rc != 0) return common::internalError(std::string("uv_poll_init(pidfd): ") + uv_strerror(rc));
  return common::okStatus();
}

Status FrontProcess::openEndpoint(UniqueFd channel, bool attached) {
  ipc::EndpointOptions options;
  options.local = ipc::Role::kController;
  options.peer = ipc::Role::kFront;
  Result<std::unique_ptr<ipc::Endpoint>> endpoint =
      ipc::Endpoint::create(loop_, std::move(channel), options);
  if (!endpoint.ok()) return endpoint.status();
  endpoint_ = std::move(endpoint).value();
  if (attached) return ipc::registerHandlers<FrontProcess>(*endpoint_, *this, kAttachHandlers);
  return ipc::registerHandlers<FrontProcess>(*endpoint_, *this, kSpawnHandlers);
}

// --- spawned fronts ----------------------------------------------------------------------

Result<std::unique_ptr<FrontProcess>> FrontProcess::spawn(uv_loop_t* loop, Launch launch,
                                                          Callbacks callbacks) {
  SpawnSpec spec{launch.binary, launch.settings.address, {}, "--address"};
  Result<SpawnedWorker> child = spawnWorker(spec);
  if (!child.ok()) return child.status();
  std::unique_ptr<FrontProcess> f(new FrontProcess(loop, child->pid, std::move(child->pidfd),
                                                   launch.settings.address, std::move(callbacks)));
  f->is_child_ = true;
  f->state_ = State::kStarting;
  f->settings_ = launch.settings;
  f->listener_ = std::move(launch.listener);
  Result<uint64_t> ticks = processStartTicks(f->pid_);
  f->start_ticks_ = ticks.ok() ? *ticks : 0;
  if (child->log) f->readLog(std::move(child->log));
  Status opened = f->openEndpoint(std::move(child->channel), false);
  if (opened.ok()) opened = f->watchExit();
  if (!opened.ok()) {
    ::kill(f->pid_, SIGKILL);
    ::waitpid(f->pid_, nullptr, 0);
    return opened;
  }
  f->endpoint_->onClose([](const Status&) {});  // the exit that follows says more
  FrontProcess* self = f.get();
  uint64_t timeout = launch.ready_timeout_ms;
  f->timer_.start(timeout, 0, [self, timeout] {
    self->failStart("not ready within " + std::to_string(timeout / 1000) + " s");
  });
  return f;
}

void FrontProcess::onSpawnHello(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kStarting || !attach_address_.empty()) {
    return replier.fail(ipc::errc::kFailed, "hello was already said");
  }
  Result<ipc::FrontHelloArgs> hello = ipc::FrontHelloArgs::decode(request.args());
  if (!hello.ok() || hello->address != address_ || hello->attached || hello->pid != pid_) {
    replier.fail(ipc::errc::kInvalidArgument, "this channel is for the front of " + address_);
    return failStart("said hello as another front");
  }
  attach_address_ = hello->attach_address;
  replier.ok();
  if (callbacks_.on_hello) callbacks_.on_hello(*this);
  sendConfig();
}

void FrontProcess::sendConfig() {
  ipc::FrontConfigArgs config{settings_, static_cast<uint64_t>(::geteuid())};
  std::vector<UniqueFd> fds;
  fds.push_back(std::move(listener_));
  Status sent = endpoint_->request(ipc::op::kFrontConfig, config.encode(), std::move(fds),
                                   [this](Result<Json> reply) {
                                     if (!reply.ok()) {
                                       failStart("refused its config: " + reply.status().message());
                                     }
                                   });
  if (!sent.ok()) failStart("cannot send the config: " + sent.message());
}

void FrontProcess::onReady(ipc::Incoming& request, ipc::Replier replier) {
  replier.ok();
  if (state_ != State::kStarting) return;
  Result<ipc::FrontReadyArgs> ready = ipc::FrontReadyArgs::decode(request.args());
  if (!ready.ok()) return failStart("sent a malformed ready: " + ready.status().message());
  if (!ready->ok) return failStart(common::printable(ready->error));
  state_ = State::kReady;
  sandbox_ = std::move(ready->sandbox);
  timer_.stop();
  reportReady(common::okStatus());
}

void FrontProcess::failStart(const std::string& reason) {
  if (ready_reported_) return;
  LOG_ERROR("front %s (pid %d): %s", address_.c_str(), static_cast<int>(pid_), reason.c_str());
  if (state_ != State::kExited) {
    state_ = State::kStopping;
    ::kill(pid_, SIGKILL);
  }
  reportReady(Status(StatusCode::kFailedPrecondition, reason));
}

void FrontProcess::reportReady(const Status& status) {
  if (ready_reported_) return;
  ready_reported_ = true;
  if (callbacks_.on_ready) callbacks_.on_ready(*this, status);
}

// --- attached fronts ---------------------------------------------------------------------

Result<std::unique_ptr<FrontProcess>> FrontProcess::attach(uv_loop_t* loop,
                                                           const state::FrontRecord& record,
                                                           Callbacks callbacks) {
  pid_t pid = static_cast<pid_t>(record.pid);
  Result<uint64_t> ticks = processStartTicks(pid);
  if (!ticks.ok()) return ticks.status();
  if (*ticks != record.start_ticks ||
      !runsProgramWith(pid, "scalws-front", "--address", record.address)) {
    return common::notFound("pid " + std::to_string(pid) + " is no longer the front of " +
                            record.address);
  }
  Result<UniqueFd> pidfd = openPidfd(pid);
  if (!pidfd.ok()) return pidfd.status();
  Result<uint64_t> again = processStartTicks(pid);
  if (!again.ok() || *again != record.start_ticks) {
    return common::notFound("pid " + std::to_string(pid) + " exited");
  }
  Result<UniqueFd> channel = connectAttachSocket(record.attach_address, pid);
  std::unique_ptr<FrontProcess> f(
      new FrontProcess(loop, pid, std::move(*pidfd), record.address, std::move(callbacks)));
  f->state_ = State::kAttaching;
  f->settings_.slot = record.slot;
  f->start_ticks_ = record.start_ticks;
  f->attach_address_ = record.attach_address;
  f->started_wall_ms_ = record.started_ms;
  int64_t age = wallMs() - record.started_ms;
  uint64_t now = uv_now(loop);
  f->started_mono_ms_ = age > 0 && static_cast<uint64_t>(age) < now ? now - age : 0;
  SCALWS_RETURN_IF_ERROR(f->watchExit());
  FrontProcess* self = f.get();
  if (!channel.ok()) {
    std::string why = channel.status().message();
    f->timer_.start(0, 0,
                    [self, why] { self->reportReady(Status(StatusCode::kUnavailable, why)); });
    return f;
  }
  SCALWS_RETURN_IF_ERROR(f->openEndpoint(std::move(*channel), true));
  f->endpoint_->onClose([self](const Status&) {
    if (self->state_ == State::kAttaching) {
      self->reportReady(Status(StatusCode::kUnavailable, "the front closed the attach channel"));
    }
  });
  f->timer_.start(kFrontAttachTimeoutMs, 0, [self] {
    self->reportReady(Status(StatusCode::kTimeout, "no hello on the attach socket"));
  });
  return f;
}

void FrontProcess::onAttachHello(ipc::Incoming& request, ipc::Replier replier) {
  if (state_ != State::kAttaching) return replier.fail(ipc::errc::kFailed, "already attached");
  Result<ipc::FrontHelloArgs> hello = ipc::FrontHelloArgs::decode(request.args());
  if (!hello.ok() || !hello->attached || hello->pid != pid_ || hello->address != address_ ||
      hello->attached->settings.address != address_) {
    std::string why = hello.ok() ? "not the front this record names" : hello.status().message();
    replier.fail(ipc::errc::kInvalidArgument, why);
    return reportReady(common::invalidArgument("attach hello: " + why));
  }
  ipc::FrontHelloArgs::Attached& a = *hello->attached;
  settings_ = a.settings;
  // Copies of what it holds, checked by the owner against the kernel before any is used.
  if (Result<UniqueFd> listener = copyFdOf(pidfd_.get(), a.listener_fd); listener.ok()) {
    attached_listener_ = std::move(*listener);
  }
  for (int fd : a.channel_fds) {
    Result<UniqueFd> copy = copyFdOf(pidfd_.get(), fd);
    if (copy.ok()) attached_channels_.push_back(std::move(*copy));
  }
  state_ = a.stopping ? State::kStopping : State::kReady;
  timer_.stop();
  endpoint_->onClose([](const Status&) {});
  replier.ok();
  handOverLog();
  reportReady(common::okStatus());
}

void FrontProcess::handOverLog() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  UniqueFd read_end(fds[0]);
  std::vector<UniqueFd> handed;
  handed.emplace_back(fds[1]);
  Status sent = endpoint_->request(ipc::op::kFrontStderr, Json::object(), std::move(handed),
                                   [](Result<Json>) {});
  if (sent.ok()) readLog(std::move(read_end));
}

void FrontProcess::readLog(UniqueFd read_end) {
  log_ = std::make_unique<WorkerLog>(loop_,
                                     "front " + address_ + " pid " + std::to_string(pid_) + ": ");
  if (!log_->start(std::move(read_end)).ok()) log_.reset();
}

// --- both --------------------------------------------------------------------------------

void FrontProcess::onMetrics(ipc::Incoming& request, ipc::Replier) {
  if (state_ != State::kReady && state_ != State::kStopping) return;
  auto drop = [this](const std::string& why) {
    if (bad_metrics_logged_) return;
    bad_metrics_logged_ = true;
    LOG_WARN("front %s pid %d sent bad metrics (dropped, said once): %s", address_.c_str(),
             static_cast<int>(pid_), why.c_str());
  };
  if (request.message.wire_bytes > kMaxFrontMetricsBytes) return drop("too large");
  if (!metrics_rate_.take(uv_now(loop_))) return drop("too frequent");
  Result<ipc::FrontMetricsArgs> m = ipc::FrontMetricsArgs::decode(request.args());
  if (!m.ok()) return drop(m.status().message());
  if (callbacks_.on_metrics) callbacks_.on_metrics(*this, std::move(m).value());
}

void FrontProcess::route(const ipc::FrontRouteArgs& entry, std::vector<UniqueFd> channels,
                         std::function<void(const Status&)> done) {
  if (!endpoint_ || !endpoint_->isOpen() || state_ != State::kReady) {
    return failLater(std::move(done), "front pid " + std::to_string(pid_) + " is not ready");
  }
  // In parts of at most one frame's descriptors; the front puts the entry in force with
  // the last part, so the answer to that one is the answer.
  size_t total = channels.size();
  size_t sent_parts = 0;
  size_t parts = std::max<size_t>(1, (total + ipc::kMaxFdsPerFrame - 1) / ipc::kMaxFdsPerFrame);
  for (size_t part = 0; part < parts; ++part) {
    ipc::FrontRouteArgs args;
    args.instance = entry.instance;
    args.names = entry.names;
    args.is_default = entry.is_default;
    args.more = part + 1 < parts;
    std::vector<UniqueFd> fds;
    size_t begin = part * ipc::kMaxFdsPerFrame;
    size_t end = std::min(total, begin + ipc::kMaxFdsPerFrame);
    for (size_t i = begin; i < end; ++i) {
      args.channels.push_back(entry.channels[i]);
      fds.push_back(std::move(channels[i]));
    }
    bool last = !args.more;
    Status sent = endpoint_->request(ipc::op::kFrontRoute, args.encode(), std::move(fds),
                                     [done, last](Result<Json> reply) {
                                       if (last || !reply.ok()) done(reply.status());
                                     });
    if (!sent.ok()) {
      if (sent_parts == 0) failLater(std::move(done), sent.message());
      return;  // an earlier part's failure (the channel closes) answers `done`
    }
    ++sent_parts;
  }
}

void FrontProcess::unroute(const std::string& instance, std::function<void(const Status&)> done) {
  if (!endpoint_ || !endpoint_->isOpen() || state_ != State::kReady) {
    return failLater(std::move(done), "front pid " + std::to_string(pid_) + " is not ready");
  }
  Status sent = endpoint_->request(ipc::op::kFrontUnroute, Json{{"instance", instance}}, {},
                                   [done](Result<Json> reply) { done(reply.status()); });
  if (!sent.ok()) failLater(std::move(done), sent.message());
}

void FrontProcess::failLater(std::function<void(const Status&)> done, const std::string& why) {
  // Never from inside the call: the caller may be walking what the answer changes.
  deferCall(loop_, [done = std::move(done), why] { done(Status(StatusCode::kUnavailable, why)); });
}

void FrontProcess::stop(uint64_t kill_after_ms) {
  if (state_ == State::kExited) return;
  bool attaching = state_ == State::kAttaching;
  state_ = State::kStopping;
  bool asked = false;
  if (endpoint_ && endpoint_->isOpen() && !attaching) {
    asked = endpoint_->request(ipc::op::kFrontStop, Json::object(), {}, [](Result<Json>) {}).ok();
  }
  if (!asked) ::kill(pid_, SIGTERM);
  timer_.start(kill_after_ms, 0, [this] {
    if (state_ == State::kExited) return;
    LOG_WARN("front %s pid %d did not stop in time; killing it", address_.c_str(),
             static_cast<int>(pid_));
    ::kill(pid_, SIGKILL);
  });
}

void FrontProcess::kill() {
  if (state_ == State::kExited) return;
  state_ = State::kStopping;
  ::kill(pid_, SIGKILL);
}

void FrontProcess::detach() {
  endpoint_.reset();
  exit_watch_.close();
  timer_.close();
}

void FrontProcess::onProcessExit() {
  if (exit_reported_) return;
  std::optional<std::string> ended = reapExited(pid_, is_child_);
  if (!ended) return;
  exit_reported_ = true;
  State before = state_;
  state_ = State::kExited;
  exit_watch_.close();
  timer_.close();
  endpoint_.reset();
  if (log_) log_->close();
  if (before == State::kStarting || before == State::kAttaching) {
    reportReady(Status(StatusCode::kFailedPrecondition, *ended + " before it was ready"));
  }
  if (callbacks_.on_exit) callbacks_.on_exit(*this, *ended);
}

}  // namespace scalws::controller
