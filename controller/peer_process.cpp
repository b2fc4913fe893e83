#include "controller/peer_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/log.h"
#include "controller/child_process.h"
#include "controller/instances/worker_probe.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;

PeerProcess::PeerProcess(uv_loop_t* loop, pid_t pid, UniqueFd pidfd, bool attaching, Config config,
                         Hooks hooks)
    : loop_(loop),
      pid_(pid),
      pidfd_(std::move(pidfd)),
      config_(std::move(config)),
      hooks_(std::move(hooks)),
      state_(attaching ? State::kAttaching : State::kStarting),
      is_child_(!attaching),
      exit_watch_(loop),
      timer_(loop) {
  started_wall_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
}

PeerProcess::~PeerProcess() {
  endpoint_.reset();
}

std::string_view PeerProcess::stateName() const {
  // In State's order.
  static constexpr std::string_view kNames[] = {"attaching", "starting", "ready", "stopping",
                                                "exited"};
  return kNames[static_cast<size_t>(state_)];
}

Status PeerProcess::watchExit() {
  int rc = exit_watch_.start(pidfd_.get(), [this] { onProcessExit(); });
  if (rc != 0) return common::internalError(std::string("uv_poll_init(pidfd): ") + uv_strerror(rc));
  return common::okStatus();
}

Status PeerProcess::openEndpoint(UniqueFd channel, const ipc::EndpointOptions& options,
                                 const Handlers& handlers) {
  Result<std::unique_ptr<ipc::Endpoint>> endpoint =
      ipc::Endpoint::create(loop_, std::move(channel), options);
  if (!endpoint.ok()) return endpoint.status();
  endpoint_ = std::move(endpoint).value();
  return handlers(*endpoint_);
}

ipc::Endpoint* PeerProcess::readyEndpoint() const {
  if (!endpoint_ || !endpoint_->isOpen() || state_ != State::kReady) return nullptr;
  return endpoint_.get();
}

// --- spawned -----------------------------------------------------------------------------

Status PeerProcess::converse(UniqueFd channel, const ipc::EndpointOptions& options,
                             const Handlers& handlers, uint64_t ready_timeout_ms) {
  Status opened = openEndpoint(std::move(channel), options, handlers);
  if (opened.ok()) opened = watchExit();
  if (!opened.ok()) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    return opened;
  }
  // A channel that closes before ready is followed by the exit, which says more.
  endpoint_->onClose([](const Status&) {});
  timer_.start(ready_timeout_ms, 0, [this, ready_timeout_ms] {
    failStart("not ready within " + std::to_string(ready_timeout_ms / 1000) + " s");
  });
  return common::okStatus();
}

bool PeerProcess::firstHello(ipc::Replier& replier) {
  if (state_ == State::kStarting && attach_address_.empty()) return true;
  replier.fail(ipc::errc::kFailed, "hello was already said");
  return false;
}

void PeerProcess::helloTaken(std::string attach_address, ipc::Replier replier) {
  attach_address_ = std::move(attach_address);
  replier.ok();
  if (hooks_.on_hello) hooks_.on_hello();
}

void PeerProcess::startStep(std::string_view op, ipc::Json args, std::vector<UniqueFd> fds,
                            const std::string& what, std::function<void()> next) {
  Status sent = endpoint_->request(
      op, std::move(args), std::move(fds), [this, what, next](Result<ipc::Json> reply) {
        if (!reply.ok()) {
          return failStart("refused its " + what + ": " + reply.status().message());
        }
        if (next) next();
      });
  if (!sent.ok()) failStart("cannot send the " + what + ": " + sent.message());
}

void PeerProcess::ready(std::optional<ipc::SandboxSummary> sandbox) {
  state_ = State::kReady;
  sandbox_ = std::move(sandbox);
  timer_.stop();
  reportReady(common::okStatus());
}

void PeerProcess::failStart(const std::string& reason) {
  if (ready_reported_) return;
  LOG_ERROR("%s pid %d: %s", config_.who.c_str(), static_cast<int>(pid_), reason.c_str());
  if (state_ != State::kExited) {
    state_ = State::kStopping;
    ::kill(pid_, SIGKILL);  // not serving yet: nothing to drain
  }
  reportReady(Status(StatusCode::kFailedPrecondition, reason));
}

void PeerProcess::reportReady(const Status& status) {
  if (ready_reported_) return;
  ready_reported_ = true;
  if (hooks_.on_ready) hooks_.on_ready(status);
}

// --- attached ----------------------------------------------------------------------------

Result<UniqueFd> PeerProcess::pin(pid_t pid, uint64_t start_ticks,
                                  const std::function<bool()>& ours, const std::string& not_ours) {
  Result<uint64_t> ticks = processStartTicks(pid);
  if (!ticks.ok()) return ticks.status();
  if (*ticks != start_ticks || !ours()) {
    return common::notFound("pid " + std::to_string(pid) + " is no longer " + not_ours);
  }
  Result<UniqueFd> pidfd = openPidfd(pid);
  if (!pidfd.ok()) return pidfd.status();
  // Checked again with the pidfd held: it pins this process, so a PID reused after this
  // point cannot be mistaken for it.
  Result<uint64_t> again = processStartTicks(pid);
  if (!again.ok() || *again != start_ticks) {
    return common::notFound("pid " + std::to_string(pid) + " exited");
  }
  return pidfd;
}

Status PeerProcess::attach(Result<UniqueFd> channel, const ipc::EndpointOptions& options,
                           const Handlers& handlers, int64_t started_ms) {
  started_wall_ms_ = started_ms;
  int64_t age = wallMs() - started_ms;
  uint64_t now = uv_now(loop_);
  started_mono_ms_ = age > 0 && static_cast<uint64_t>(age) < now ? now - age : 0;
  SCALWS_RETURN_IF_ERROR(watchExit());
  if (!channel.ok()) {
    // Ours (the checks passed) but unreachable: the owner hears it from on_ready, on the
    // next loop turn, and stops it.
    std::string why = channel.status().message();
    timer_.start(0, 0, [this, why] { reportReady(Status(StatusCode::kUnavailable, why)); });
    return common::okStatus();
  }
  SCALWS_RETURN_IF_ERROR(openEndpoint(std::move(*channel), options, handlers));
  endpoint_->onClose([this](const Status& why) {
    if (state_ == State::kAttaching) {
      reportReady(Status(StatusCode::kUnavailable, "the " + config_.noun +
                                                       " closed the attach channel" +
                                                       (why.ok() ? "" : ": " + why.message())));
    }
  });
  timer_.start(kAttachTimeoutMs, 0, [this] {
    reportReady(Status(StatusCode::kTimeout, "no hello on the attach socket"));
  });
  return common::okStatus();
}

bool PeerProcess::attachHello(ipc::Replier& replier) {
  if (state_ == State::kAttaching) return true;
  replier.fail(ipc::errc::kFailed, "already attached");
  return false;
}

void PeerProcess::attached(bool stopping, ipc::Replier replier) {
  state_ = stopping ? State::kStopping : State::kReady;
  timer_.stop();
  endpoint_->onClose([](const Status&) {});
  replier.ok();
  handOverLog();
  reportReady(common::okStatus());
}

// Its old stdout and stderr went with the controller that died (writes there fail with
// EPIPE, which it ignores): a new pipe, read here.
void PeerProcess::handOverLog() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    LOG_WARN("%s: no log pipe for pid %d: %s", config_.who.c_str(), static_cast<int>(pid_),
             std::strerror(errno));
    return;
  }
  UniqueFd read_end(fds[0]);
  std::vector<UniqueFd> handed;
  handed.emplace_back(fds[1]);
  std::string who = config_.who;
  pid_t pid = pid_;
  Status sent =
      endpoint_->request(config_.stderr_op, ipc::Json::object(), std::move(handed),
                         [who, pid](Result<ipc::Json> reply) {
                           if (reply.ok()) return;
                           LOG_WARN("%s: pid %d kept its old stderr: %s", who.c_str(),
                                    static_cast<int>(pid), reply.status().message().c_str());
                         });
  if (sent.ok()) readLog(std::move(read_end));
}

// --- both --------------------------------------------------------------------------------

void PeerProcess::readLog(UniqueFd read_end) {
  log_ = std::make_unique<WorkerLog>(loop_, config_.log_prefix, hooks_.log_sink);
  Status started = log_->start(std::move(read_end));
  if (!started.ok()) {
    LOG_WARN("%s: not reading the log of pid %d: %s", config_.who.c_str(), static_cast<int>(pid_),
             started.message().c_str());
    log_.reset();
  }
}

bool PeerProcess::admitMetrics(const ipc::Incoming& request) {
  // Before ready (or an attach hello) the process is not yet known to be this one.
  if (state_ != State::kReady && state_ != State::kStopping) return false;
  if (request.message.wire_bytes > kMaxMetricsBytes) {
    dropMetrics(std::to_string(request.message.wire_bytes) + " bytes, over " +
                std::to_string(kMaxMetricsBytes));
    return false;
  }
  if (!metrics_rate_.take(uv_now(loop_))) {
    dropMetrics("more than " + std::to_string(static_cast<int>(kMetricsPerSecond)) + " a second");
    return false;
  }
  return true;
}

void PeerProcess::dropMetrics(const std::string& why) {
  if (bad_metrics_logged_) return;
  bad_metrics_logged_ = true;
  LOG_WARN("%s pid %d sent bad metrics (dropped, said once): %s", config_.who.c_str(),
           static_cast<int>(pid_), why.c_str());
}

void PeerProcess::stop(uint64_t kill_after_ms) {
  if (state_ == State::kExited) return;
  bool attaching = state_ == State::kAttaching;
  state_ = State::kStopping;
  bool asked = false;
  if (endpoint_ && endpoint_->isOpen() && !attaching) {
    asked =
        endpoint_->request(config_.stop, ipc::Json::object(), {}, [](Result<ipc::Json>) {}).ok();
  }
  if (!asked) ::kill(pid_, SIGTERM);
  timer_.start(kill_after_ms, 0, [this] {
    if (state_ == State::kExited) return;
    LOG_WARN("%s pid %d did not stop in time; killing it", config_.who.c_str(),
             static_cast<int>(pid_));
    ::kill(pid_, SIGKILL);
  });
}

void PeerProcess::kill() {
  if (state_ == State::kExited) return;
  state_ = State::kStopping;
  ::kill(pid_, SIGKILL);
}

void PeerProcess::detach() {
  endpoint_.reset();
  exit_watch_.close();
  timer_.close();
}

void PeerProcess::onProcessExit() {
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
  if (hooks_.on_exit) hooks_.on_exit(how);
}

}  // namespace scalws::controller
