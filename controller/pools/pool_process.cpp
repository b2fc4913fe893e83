#include "controller/pools/pool_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/log.h"
#include "controller/child_process.h"
#include "controller/deferred_call.h"
#include "controller/exec_report.h"
#include "controller/instances/worker_probe.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;

namespace {

constexpr uint64_t kReadyPollMs = 25;
constexpr size_t kLogTailBytes = 1024;

// fork + exec of `php-fpm -F -y CONF`; see pool_process.h for what the child gets.
Result<pid_t> spawnFpm(const std::string& php_fpm, const PoolPaths& paths) {
  std::vector<std::string> args = {php_fpm, "-F", "-y", paths.config};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string path_env = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path_env.data(), nullptr};
  Result<ExecReport> report = ExecReport::open();
  if (!report.ok()) return report.status();
  pid_t pid = ::fork();
  if (pid < 0) return common::errnoStatus(errno, "fork");
  if (pid == 0) {
    auto fail = [&](int step) { report->fail(step); };
    if (::setsid() < 0) fail(0);
    // Non-blocking open: with no reader it fails rather than waits (the controller holds
    // the FIFO open before any spawn); the writes themselves block, as php-fpm expects.
    int log = ::open(paths.pipe.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (log < 0 || null_fd < 0) fail(1);
    if (::fcntl(log, F_SETFL, ::fcntl(log, F_GETFL) & ~O_NONBLOCK) != 0) fail(1);
    if (::dup2(null_fd, 0) < 0 || ::dup2(log, 1) < 0 || ::dup2(log, 2) < 0) fail(2);
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(php_fpm.c_str(), argv.data(), envp);
    fail(3);
  }
  if (std::optional<ExecReport::Failure> e = report->wait(pid)) {
    static const char* const kFpmSteps[] = {"setsid", "opening the log", "moving fds", "exec"};
    int step = e->step >= 0 && e->step < 4 ? e->step : 3;
    std::string what = step == 1 ? "opening " + paths.pipe : kFpmSteps[step];
    return common::errnoStatus(e->err, "starting " + php_fpm + ": " + what);
  }
  return pid;
}

}  // namespace

PoolProcess::PoolProcess(uv_loop_t* loop, std::string name, PoolPaths paths, std::string php_fpm,
                         RestartLimits limits, Hooks hooks, uint64_t log_cap)
    : loop_(loop),
      name_(std::move(name)),
      paths_(std::move(paths)),
      php_fpm_(std::move(php_fpm)),
      policy_(limits),
      hooks_(std::move(hooks)),
      log_(loop, "pool " + name_, paths_.pipe, paths_.log, log_cap) {}

PoolProcess::~PoolProcess() {
  *alive_ = false;
  leave();
}

std::string_view PoolProcess::stateName() const {
  // In State's order.
  static constexpr std::string_view kNames[] = {"stopped", "starting", "running", "restarting",
                                                "stopping"};
  return kNames[static_cast<size_t>(state_)];
}

ipc::Json PoolProcess::status() const {
  ipc::Json out = {{"state", stateName()},      {"pid", pid_},
                   {"restarts", restarts_},     {"last_exit", last_exit_},
                   {"started_ms", started_ms_}, {"adopted", adopted_}};
  if (state_ == State::kBackoff && timer_.active()) {
    uint64_t now = uv_now(loop_);
    out["restart_in_ms"] = deadline_ms_ > now ? deadline_ms_ - now : 0;
  }
  return out;
}

void PoolProcess::later(std::function<void()> fn) {
  std::weak_ptr<bool> alive = alive_;
  deferCall(loop_, [alive, fn = std::move(fn)] {
    if (!alive.expired()) fn();
  });
}

// --- timers and watching -----------------------------------------------------------------

void PoolProcess::arm(uint64_t ms, uint64_t repeat, void (*fire)(PoolProcess&)) {
  timer_.start(ms, repeat, [this, fire] { fire(*this); });
}

void PoolProcess::disarm() {
  timer_.stop();
}

void PoolProcess::watch() {
  exit_watch_.start(pidfd_.get(), [this] { onExit(); });
}

void PoolProcess::leave() {
  exit_watch_.close();
  timer_.close();
  pidfd_.reset();
  log_.close();  // the master keeps its end; the next controller reads the FIFO again
  if (state_ != State::kStopped) state_ = State::kStopped;
}

// --- starting ----------------------------------------------------------------------------

void PoolProcess::startOnce(Done ready) {
  supervised_ = false;
  ready_ = std::move(ready);
  later([this] { spawn(); });
}

void PoolProcess::supervise(Done first) {
  supervised_ = true;
  ready_ = std::move(first);
  later([this] {
    if (adopt()) return becameRunning();
    spawn();
  });
}

pid_t PoolProcess::findOurMaster(const PoolPaths& paths) {
  std::string text = readSmallFile(paths.pid);
  char* end = nullptr;
  long pid = std::strtol(text.c_str(), &end, 10);
  if (pid <= 1 || end == text.c_str()) return 0;
  std::string cmdline = readSmallFile("/proc/" + std::to_string(pid) + "/cmdline");
  // php-fpm rewrites its title: "php-fpm: master process (/path/to/php-fpm.conf)".
  std::string want = "php-fpm: master process (" + paths.config + ")";
  return cmdline.compare(0, want.size(), want) == 0 ? static_cast<pid_t>(pid) : 0;
}

bool PoolProcess::adopt() {
  pid_t pid = findOurMaster(paths_);
  if (pid == 0) return false;
  Status log = log_.open();
  if (!log.ok()) LOG_WARN("pool %s: %s", name_.c_str(), log.message().c_str());
  Result<UniqueFd> pidfd = openPidfd(pid);
  // Checked again with the pidfd held: it pins the process, a reused PID cannot pass.
  if (!pidfd.ok() || findOurMaster(paths_) != pid) return false;
  pid_ = pid;
  pidfd_ = std::move(pidfd).value();
  is_child_ = false;
  adopted_ = true;
  started_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
  watch();
  LOG_INFO("pool %s: adopted php-fpm master pid %d", name_.c_str(), static_cast<int>(pid));
  return true;
}

void PoolProcess::spawn() {
  if (state_ == State::kStopping) return;
  Status prepared = hooks_.prepare ? hooks_.prepare() : Status();
  if (!prepared.ok()) return failAttempt(prepared.message());
  removeStaleSocket(paths_.socket);
  start_problem_.clear();
  Status log = log_.open();
  if (!log.ok()) return failAttempt(log.message());
  Result<pid_t> pid = spawnFpm(php_fpm_, paths_);
  if (!pid.ok()) return failAttempt(pid.status().message());
  Result<UniqueFd> pidfd = openPidfd(*pid);
  if (!pidfd.ok()) {
    ::kill(-*pid, SIGKILL);
    ::waitpid(*pid, nullptr, 0);
    return failAttempt(pidfd.status().message());
  }
  pid_ = *pid;
  pidfd_ = std::move(pidfd).value();
  is_child_ = true;
  adopted_ = false;
  started_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
  state_ = State::kStarting;
  watch();
  deadline_ms_ = uv_now(loop_) + kPoolReadyTimeoutMs;
  arm(kReadyPollMs, kReadyPollMs, [](PoolProcess& self) { self.onTick(); });
  LOG_INFO("pool %s: php-fpm started (pid %d)", name_.c_str(), static_cast<int>(pid_));
}

void PoolProcess::onTick() {
  if (state_ != State::kStarting) return disarm();
  if (socketAccepts(paths_.socket)) {
    disarm();
    return becameRunning();
  }
  if (uv_now(loop_) < deadline_ms_) return;
  disarm();
  start_problem_ = "did not accept on " + paths_.socket + " within " +
                   std::to_string(kPoolReadyTimeoutMs / 1000) + " s";
  ::kill(-pid_, SIGKILL);  // its exit (pidfd) goes on from there
}

void PoolProcess::becameRunning() {
  state_ = State::kRunning;
  supervised_ = true;  // once up, a pool is kept up
  if (hooks_.on_running) hooks_.on_running();
  if (ready_) std::exchange(ready_, nullptr)(Status());
}

void PoolProcess::failAttempt(const std::string& why) {
  last_exit_ = why;
  if (!supervised_) {
    state_ = State::kStopped;
    removeStaleSocket(paths_.socket);
    Status error(StatusCode::kFailedPrecondition, "php-fpm for pool " + name_ + ": " + why);
    if (ready_) later([this, error] { std::exchange(ready_, nullptr)(error); });
    return;
  }
  scheduleRestart(why, 0);
}

// --- exits -------------------------------------------------------------------------------

void PoolProcess::onExit() {
  std::optional<std::string> ended = reapExited(pid_, is_child_);
  if (!ended) return;  // not reapable yet; the pidfd stays readable
  std::string how = std::move(*ended);
  exit_watch_.close();
  pidfd_.reset();
  disarm();
  // Its children outlive it, still accepting on the old socket: they go with it.
  ::kill(-pid_, SIGKILL);
  pid_t pid = pid_;
  pid_ = 0;
  uint64_t now = uv_now(loop_);
  uint64_t uptime = now - std::min(now, started_mono_ms_);
  State before = state_;
  if (before == State::kStopping) return finishStop();
  std::string why = "php-fpm (pid " + std::to_string(pid) + ") " + how;
  if (!start_problem_.empty() && before == State::kStarting) why += ": " + start_problem_;
  log_.drain();  // all it wrote is in the FIFO by now
  std::string tail = before == State::kStarting ? logTail() : "";
  if (!tail.empty()) why += "; its log ends with: " + tail;
  if (!supervised_) return failAttempt(why);
  scheduleRestart(why, uptime);
}

void PoolProcess::scheduleRestart(const std::string& why, uint64_t uptime_ms) {
  removeStaleSocket(paths_.socket);
  RestartPolicy::Decision d = policy_.onCrash(0, uv_now(loop_), uptime_ms);
  last_exit_ = why;
  state_ = State::kBackoff;
  LOG_ERROR("pool %s: %s; restarting in %llu ms", name_.c_str(), why.c_str(),
            static_cast<unsigned long long>(d.delay_ms));
  if (hooks_.on_event) {
    hooks_.on_event("pool.exited", "pool " + name_ + ": " + why + "; restarting in " +
                                       std::to_string(d.delay_ms) + " ms");
  }
  if (ready_) {
    Status error(StatusCode::kUnavailable, "php-fpm for pool " + name_ + ": " + why);
    later([this, error] {
      if (ready_) std::exchange(ready_, nullptr)(error);
    });
  }
  deadline_ms_ = uv_now(loop_) + d.delay_ms;
  arm(d.delay_ms, 0, [](PoolProcess& self) {
    if (self.state_ != State::kBackoff) return;
    ++self.restarts_;
    self.spawn();
  });
}

// --- stopping ----------------------------------------------------------------------------

void PoolProcess::stop(Done done) {
  stop_done_.push_back(std::move(done));
  switch (state_) {
    case State::kStopping:
      return;
    case State::kStopped:
    case State::kBackoff:
      disarm();
      state_ = State::kStopping;
      return later([this] { finishStop(); });
    case State::kStarting:
    case State::kRunning:
      break;
  }
  state_ = State::kStopping;
  ::kill(pid_, SIGQUIT);  // graceful: php-fpm lets requests in flight finish
  arm(kPoolStopGraceMs, 0, [](PoolProcess& self) {
    if (self.pid_ == 0) return;
    LOG_WARN("pool %s: php-fpm pid %d did not stop in time; killing it", self.name_.c_str(),
             static_cast<int>(self.pid_));
    ::kill(-self.pid_, SIGKILL);
  });
}

void PoolProcess::finishStop() {
  if (state_ != State::kStopping) return;
  disarm();
  state_ = State::kStopped;
  removeStaleSocket(paths_.socket);
  if (ready_) {
    Status error(StatusCode::kUnavailable, "pool " + name_ + " was stopped");
    std::exchange(ready_, nullptr)(error);
  }
  std::vector<Done> done = std::move(stop_done_);
  stop_done_.clear();
  for (Done& d : done) d(Status());
}

std::string PoolProcess::logTail() const {
  std::string text = readFileTail(paths_.log, kLogTailBytes);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t cut = text.size();
  for (int lines = 0; lines < 3 && cut != std::string::npos && cut > 0; ++lines) {
    cut = text.rfind('\n', cut - 1);
  }
  if (cut != std::string::npos && cut < text.size()) text = text.substr(cut + 1);
  for (char& c : text) c = c == '\n' ? '|' : c;
  return text;
}

}  // namespace scalws::controller
