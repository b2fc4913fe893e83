#include "controller/pools/pool_process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "common/log.h"
#include "controller/child_process.h"
#include "controller/exec_report.h"

namespace scalws::controller {

using common::Result;
using common::Status;

namespace {

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
    : name_(std::move(name)),
      paths_(std::move(paths)),
      php_fpm_(std::move(php_fpm)),
      prepare_(std::move(hooks.prepare)),
      log_(loop, "pool " + name_, paths_.pipe, paths_.log, log_cap),
      child_(loop,
             SupervisedChildConfig{
                 .who = "pool " + name_,
                 .program = "php-fpm",
                 .event_kind = "pool",
                 .error_prefix = "php-fpm for pool " + name_,
                 .stopped_message = "pool " + name_ + " was stopped",
                 .socket = paths_.socket,
                 .pid_file = "",  // php-fpm writes and removes its own
                 .ready_timeout_ms = kPoolReadyTimeoutMs,
                 .stop_grace_ms = kPoolStopGraceMs,
                 // graceful: php-fpm lets requests in flight finish
                 .stop_signal = SIGQUIT,
                 // a pool the DB holds should run, and `pool show` says how it is doing
                 .gives_up = false,
             },
             limits,
             SupervisedChild::Hooks{
                 .launch = [this] { return launch(); },
                 .adoptable = [this] { return findOurMaster(paths_); },
                 .on_started =
                     [this] {
                       if (!child_.adopted()) return;  // a spawn opened it first
                       Status log = log_.open();
                       if (!log.ok()) LOG_WARN("pool %s: %s", name_.c_str(), log.message().c_str());
                     },
                 .on_running = std::move(hooks.on_running),
                 .exit_cause = nullptr,
                 .log_tail = [this](bool was_starting) -> std::string {
                   log_.drain();  // all it wrote is in the FIFO by now
                   return was_starting ? lastLogLines(paths_.log, kLogTailBytes) : "";
                 },
                 .on_event = std::move(hooks.on_event),
             }) {}

PoolProcess::~PoolProcess() {
  leave();
}

ipc::Json PoolProcess::status() const {
  ipc::Json out = child_.status();
  if (std::optional<uint64_t> in = child_.restartInMs()) out["restart_in_ms"] = *in;
  return out;
}

void PoolProcess::leave() {
  child_.leave();
  log_.close();  // the master keeps its end; the next controller reads the FIFO again
}

void PoolProcess::startOnce(Done ready) {
  child_.setSupervised(false);
  child_.start(false, std::move(ready));
}

void PoolProcess::supervise(Done first) {
  child_.setSupervised(true);
  child_.start(true, std::move(first));
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

Result<pid_t> PoolProcess::launch() {
  Status prepared = prepare_ ? prepare_() : Status();
  if (!prepared.ok()) return prepared;
  Status log = log_.open();
  if (!log.ok()) return log;
  return spawnFpm(php_fpm_, paths_);
}

}  // namespace scalws::controller
