#include "controller/supervised_child.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "common/log.h"
#include "controller/child_process.h"
#include "controller/deferred_call.h"
#include "controller/instances/worker_probe.h"
#include "controller/pools/pool_fpm_config.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;

namespace {

constexpr uint64_t kSocketPollMs = 25;

}  // namespace

SupervisedChild::SupervisedChild(uv_loop_t* loop, SupervisedChildConfig config,
                                 RestartLimits limits, Hooks hooks)
    : loop_(loop), config_(std::move(config)), policy_(limits), hooks_(std::move(hooks)) {}

SupervisedChild::~SupervisedChild() {
  *alive_ = false;
  leave();
}

std::string_view SupervisedChild::stateName() const {
  static constexpr std::string_view kNames[] = {"stopped",    "starting", "running",
                                                "restarting", "stopping", "failed"};
  return kNames[static_cast<size_t>(state_)];
}

std::optional<uint64_t> SupervisedChild::restartInMs() const {
  if (state_ != State::kBackoff || !timer_.active()) return std::nullopt;
  uint64_t now = uv_now(loop_);
  return deadline_ms_ > now ? deadline_ms_ - now : 0;
}

ipc::Json SupervisedChild::status() const {
  return {{"state", stateName()},      {"pid", pid_},
          {"restarts", restarts_},     {"last_exit", last_exit_},
          {"started_ms", started_ms_}, {"adopted", adopted_}};
}

std::string SupervisedChild::label(pid_t pid) const {
  std::string number = std::to_string(pid);
  return config_.program.empty() ? "pid " + number : config_.program + " (pid " + number + ")";
}

void SupervisedChild::later(std::function<void()> fn) {
  std::weak_ptr<bool> alive = alive_;
  deferCall(loop_, [alive, fn = std::move(fn)] {
    if (!alive.expired()) fn();
  });
}

void SupervisedChild::arm(uint64_t ms, uint64_t repeat, void (*fire)(SupervisedChild&)) {
  timer_.start(ms, repeat, [this, fire] { fire(*this); });
}

void SupervisedChild::watch() {
  exit_watch_.start(pidfd_.get(), [this] { onExit(); });
}

void SupervisedChild::leave() {
  exit_watch_.close();
  timer_.close();
  pidfd_.reset();
  state_ = State::kStopped;
}

// --- starting ----------------------------------------------------------------------------

void SupervisedChild::start(bool adopt_running, Done first) {
  first_ = std::move(first);
  later([this, adopt_running] {
    if (adopt_running && adopt()) return becameRunning();
    spawn();
  });
}

bool SupervisedChild::adopt() {
  pid_t pid = hooks_.adoptable ? hooks_.adoptable() : 0;
  if (pid <= 0) return false;
  Result<UniqueFd> pidfd = openPidfd(pid);
  // Asked again with the pidfd held: it pins the process, a reused PID cannot pass.
  if (!pidfd.ok() || hooks_.adoptable() != pid) return false;
  pid_ = pid;
  pidfd_ = std::move(pidfd).value();
  is_child_ = false;
  adopted_ = true;
  started_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
  if (hooks_.on_started) hooks_.on_started();
  watch();
  LOG_INFO("%s: adopted %s", config_.who.c_str(), label(pid).c_str());
  return true;
}

void SupervisedChild::spawn() {
  if (state_ == State::kStopping) return;
  start_problem_.clear();
  removeStaleSocket(config_.socket);
  Result<pid_t> pid = hooks_.launch();
  if (!pid.ok()) return failed(pid.status().message(), 0);
  Result<UniqueFd> pidfd = openPidfd(*pid);
  if (!pidfd.ok()) {
    ::kill(-*pid, SIGKILL);
    ::waitpid(*pid, nullptr, 0);
    return failed(pidfd.status().message(), 0);
  }
  pid_ = *pid;
  pidfd_ = std::move(pidfd).value();
  is_child_ = true;
  adopted_ = false;
  started_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
  state_ = State::kStarting;
  if (!config_.pid_file.empty()) {
    Status written = writeFileAtomically(config_.pid_file, std::to_string(pid_) + "\n");
    if (!written.ok()) LOG_WARN("%s: %s", config_.who.c_str(), written.message().c_str());
  }
  if (hooks_.on_started) hooks_.on_started();
  watch();
  deadline_ms_ = uv_now(loop_) + config_.ready_timeout_ms;
  arm(kSocketPollMs, kSocketPollMs, [](SupervisedChild& self) { self.onTick(); });
  LOG_INFO("%s: started %s", config_.who.c_str(), label(pid_).c_str());
}

void SupervisedChild::onTick() {
  if (state_ != State::kStarting) return timer_.stop();
  if (socketAccepts(config_.socket)) {
    timer_.stop();
    return becameRunning();
  }
  if (uv_now(loop_) < deadline_ms_) return;
  timer_.stop();
  start_problem_ = "did not accept on " + config_.socket + " within " +
                   std::to_string(config_.ready_timeout_ms / 1000) + " s";
  ::kill(-pid_, SIGKILL);  // its exit (pidfd) goes on from there
}

void SupervisedChild::becameRunning() {
  state_ = State::kRunning;
  supervised_ = true;  // once up, it is kept up
  if (hooks_.on_running) hooks_.on_running();
  if (first_) std::exchange(first_, nullptr)(Status());
}

// --- exits -------------------------------------------------------------------------------

void SupervisedChild::onExit() {
  std::optional<std::string> ended = reapExited(pid_, is_child_);
  if (!ended) return;  // not reapable yet; the pidfd stays readable
  exit_watch_.close();
  pidfd_.reset();
  timer_.stop();
  // Its children (a master's workers) outlive it, still accepting on the old socket: they
  // go with it.
  ::kill(-pid_, SIGKILL);
  pid_t pid = pid_;
  pid_ = 0;
  if (!config_.pid_file.empty()) ::unlink(config_.pid_file.c_str());
  uint64_t now = uv_now(loop_);
  uint64_t uptime = now - std::min(now, started_mono_ms_);
  bool was_starting = state_ == State::kStarting;
  if (state_ == State::kStopping) return finishStop();
  std::string why = label(pid) + " " + *ended;
  std::string cause = hooks_.exit_cause ? hooks_.exit_cause() : "";
  if (!cause.empty()) why += ": " + cause;
  if (!start_problem_.empty() && was_starting) why += ": " + start_problem_;
  std::string tail = hooks_.log_tail ? hooks_.log_tail(was_starting) : "";
  if (!tail.empty()) why += "; its log ends with: " + tail;
  failed(why, uptime);
}

void SupervisedChild::failFirstLater(Status error) {
  if (!first_) return;
  later([this, error = std::move(error)] {
    if (first_) std::exchange(first_, nullptr)(error);
  });
}

void SupervisedChild::failed(const std::string& why, uint64_t uptime_ms) {
  removeStaleSocket(config_.socket);
  last_exit_ = why;
  const std::string& who = config_.who;
  if (!supervised_) {
    // A first start that fails is the caller's to report (`app add`, `pool add` refuse).
    state_ = config_.gives_up ? State::kFailed : State::kStopped;
    failFirstLater(Status(StatusCode::kFailedPrecondition, config_.error_prefix + ": " + why));
    if (config_.gives_up && hooks_.on_event) {
      hooks_.on_event(config_.event_kind + ".failed", who + " did not start: " + why);
    }
    return;
  }
  RestartPolicy::Decision d = policy_.onCrash(0, uv_now(loop_), uptime_ms);
  if (d.give_up && config_.gives_up) {
    state_ = State::kFailed;
    last_exit_ =
        "crash loop: " + std::to_string(d.crashes_in_window) + " exits in a row, the last: " + why;
    LOG_ERROR("%s: %s; giving up", who.c_str(), last_exit_.c_str());
    if (hooks_.on_event)
      hooks_.on_event(config_.event_kind + ".failed", who + " failed: " + last_exit_);
    // A restart waiting for it.
    failFirstLater(
        Status(StatusCode::kFailedPrecondition, config_.error_prefix + ": " + last_exit_));
    return;
  }
  state_ = State::kBackoff;
  LOG_ERROR("%s: %s; restarting in %llu ms", who.c_str(), why.c_str(),
            static_cast<unsigned long long>(d.delay_ms));
  if (hooks_.on_event) {
    hooks_.on_event(config_.event_kind + ".exited",
                    who + ": " + why + "; restarting in " + std::to_string(d.delay_ms) + " ms");
  }
  // One that restarts for ever answers the start waiting for it now; one that gives up
  // answers once it runs or gave up.
  if (!config_.gives_up) {
    failFirstLater(Status(StatusCode::kUnavailable, config_.error_prefix + ": " + why));
  }
  deadline_ms_ = uv_now(loop_) + d.delay_ms;
  arm(d.delay_ms, 0, [](SupervisedChild& self) {
    if (self.state_ != State::kBackoff) return;
    ++self.restarts_;
    self.spawn();
  });
}

// --- stopping ----------------------------------------------------------------------------

void SupervisedChild::stop(Done done) {
  stop_done_.push_back(std::move(done));
  switch (state_) {
    case State::kStopping:
      return;
    case State::kStopped:
    case State::kBackoff:
    case State::kFailed:
      timer_.stop();
      state_ = State::kStopping;
      return later([this] { finishStop(); });
    case State::kStarting:
    case State::kRunning:
      break;
  }
  state_ = State::kStopping;
  ::kill(pid_, config_.stop_signal);
  arm(config_.stop_grace_ms, 0, [](SupervisedChild& self) {
    if (self.pid_ == 0) return;
    LOG_WARN("%s: %s did not stop in time; killing it", self.config_.who.c_str(),
             self.label(self.pid_).c_str());
    ::kill(-self.pid_, SIGKILL);
  });
}

void SupervisedChild::finishStop() {
  if (state_ != State::kStopping) return;
  timer_.stop();
  state_ = State::kStopped;
  removeStaleSocket(config_.socket);
  if (!config_.pid_file.empty()) ::unlink(config_.pid_file.c_str());
  if (first_) {
    std::exchange(first_, nullptr)(Status(StatusCode::kUnavailable, config_.stopped_message));
  }
  std::vector<Done> done = std::move(stop_done_);
  stop_done_.clear();
  for (Done& d : done) d(Status());
}

}  // namespace scalws::controller
