#include "controller/apps/app_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

constexpr uint64_t kReadyPollMs = 25;

bool accepts(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return false;
  int rc = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  return rc == 0 || errno == EAGAIN;
}

void removeStaleSocket(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path.c_str());
}

std::string readSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// The real uid of `pid` (from /proc), or -1.
long uidOf(pid_t pid) {
  std::string status = readSmallFile("/proc/" + std::to_string(pid) + "/status");
  size_t at = status.find("\nUid:");
  if (at == std::string::npos) return -1;
  return std::strtol(status.c_str() + at + 5, nullptr, 10);
}

uint64_t rssBytes(pid_t pid) {
  std::string statm = readSmallFile("/proc/" + std::to_string(pid) + "/statm");
  unsigned long size = 0, resident = 0;
  if (std::sscanf(statm.c_str(), "%lu %lu", &size, &resident) != 2) return 0;
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

// The last lines of the log, on one line: why a first start failed, in `app add`'s answer.
std::string logTail(const std::string& path) {
  constexpr size_t kTailBytes = 600;
  std::string text = readSmallFile(path);
  if (text.size() > kTailBytes) text = text.substr(text.size() - kTailBytes);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t cut = text.size();
  for (int lines = 0; lines < 3 && cut != std::string::npos && cut > 0; ++lines) {
    cut = text.rfind('\n', cut - 1);
  }
  if (cut != std::string::npos && cut < text.size()) text = text.substr(cut + 1);
  for (char& c : text) c = c == '\n' ? '|' : c;
  return text;
}

struct SpawnError {
  int step;  // < 0: a step of ours; >= 0: an ExecSandbox::Step
  int err;
};

constexpr int kStepSetsid = -1, kStepFds = -2, kStepChdir = -3, kStepExec = -4;

std::string stepText(int step, const AppSpec& spec) {
  switch (step) {
    case kStepSetsid:
      return "setsid";
    case kStepFds:
      return "moving fds";
    case kStepChdir:
      return "entering " + spec.dir;
    case kStepExec:
      return "exec";
    default:
      return "entering the sandbox: " + std::string(sandbox::ExecSandbox::stepName(
                                            static_cast<sandbox::ExecSandbox::Step>(step)));
  }
}

}  // namespace

AppProcess::AppProcess(uv_loop_t* loop, AppSpec spec, uint32_t index, AppProcessPaths paths,
                       RestartLimits limits, PrepareSandbox prepare, OnEvent on_event)
    : loop_(loop),
      spec_(std::move(spec)),
      index_(index),
      paths_(std::move(paths)),
      policy_(limits),
      prepare_(std::move(prepare)),
      on_event_(std::move(on_event)) {}

AppProcess::~AppProcess() {
  *alive_ = false;
  leave();
}

std::string_view AppProcess::stateName() const {
  static constexpr std::string_view kNames[] = {"stopped",    "starting", "running",
                                                "restarting", "stopping", "failed"};
  return kNames[static_cast<size_t>(state_)];
}

ipc::Json AppProcess::status() const {
  ipc::Json out = {{"index", index_},
                   {"state", stateName()},
                   {"pid", pid_},
                   {"restarts", restarts_},
                   {"last_exit", last_exit_},
                   {"started_ms", started_ms_},
                   {"adopted", adopted_},
                   {"socket", paths_.socket},
                   {"rss_bytes", pid_ > 0 ? rssBytes(pid_) : 0}};
  return out;
}

void AppProcess::later(std::function<void()> fn) {
  std::weak_ptr<bool> alive = alive_;
  deferCall(loop_, [alive, fn = std::move(fn)] {
    if (!alive.expired()) fn();
  });
}

void AppProcess::arm(uint64_t ms, uint64_t repeat, void (*fire)(AppProcess&)) {
  if (timer_ == nullptr) {
    timer_ = new uv_timer_t;
    uv_timer_init(loop_, timer_);
    timer_->data = this;
  }
  fire_ = fire;
  uv_timer_start(
      timer_,
      [](uv_timer_t* t) {
        static_cast<AppProcess*>(t->data)->fire_(*static_cast<AppProcess*>(t->data));
      },
      ms, repeat);
}

void AppProcess::disarm() {
  if (timer_ != nullptr) uv_timer_stop(timer_);
}

void AppProcess::watch() {
  poll_ = new uv_poll_t;
  uv_poll_init(loop_, poll_, pidfd_.get());
  poll_->data = this;
  uv_poll_start(poll_, UV_READABLE,
                [](uv_poll_t* h, int, int) { static_cast<AppProcess*>(h->data)->onExit(); });
}

void AppProcess::leave() {
  if (poll_ != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(poll_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
    poll_ = nullptr;
  }
  if (timer_ != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(timer_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    timer_ = nullptr;
  }
  pidfd_.reset();
  state_ = State::kStopped;
}

// --- starting ----------------------------------------------------------------------------

void AppProcess::start(bool adopt_running, Done first) {
  first_ = std::move(first);
  policy_.reset();
  later([this, adopt_running] {
    if (adopt_running && adopt()) return becameRunning();
    spawn();
  });
}

std::string AppProcess::expectedCmdline() const {
  std::string out;
  for (const std::string& a : appArgv(spec_, paths_.socket)) out += a + '\0';
  return out;
}

bool AppProcess::adopt() {
  std::string text = readSmallFile(paths_.pid);
  long pid = std::strtol(text.c_str(), nullptr, 10);
  if (pid <= 1) return false;
  auto ours = [&] {
    return readSmallFile("/proc/" + std::to_string(pid) + "/cmdline") == expectedCmdline() &&
           uidOf(static_cast<pid_t>(pid)) > 0;
  };
  if (!ours()) return false;
  Result<UniqueFd> pidfd = openPidfd(static_cast<pid_t>(pid));
  if (!pidfd.ok() || !ours()) return false;  // the pidfd pins it: a reused pid cannot pass
  pid_ = static_cast<pid_t>(pid);
  pidfd_ = std::move(pidfd).value();
  is_child_ = false;
  adopted_ = true;
  started_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
  watch();
  LOG_INFO("app %s[%u]: adopted pid %ld", spec_.name.c_str(), index_, pid);
  return true;
}

void AppProcess::spawn() {
  if (state_ == State::kStopping) return;
  start_problem_.clear();
  Result<sandbox::ExecSandbox> box = prepare_();
  if (!box.ok()) return crashed("cannot prepare its sandbox: " + box.status().message(), 0);
  removeStaleSocket(paths_.socket);
  std::vector<std::string> args = appArgv(spec_, paths_.socket);
  std::vector<std::string> env = appEnv(spec_, paths_.socket, paths_.tmp);
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int log = ::open(paths_.log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int pipe_fds[2] = {-1, -1};
  if (log < 0 || null_fd < 0 || ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    int err = errno;
    if (log >= 0) ::close(log);
    if (null_fd >= 0) ::close(null_fd);
    return crashed("cannot open " + paths_.log + ": " + std::strerror(err), 0);
  }
  UniqueFd log_fd(log), null_guard(null_fd), error_read(pipe_fds[0]), error_write(pipe_fds[1]);
  const std::string& dir = spec_.dir;
  const char* binary = argv[0];
  pid_t pid = ::fork();
  if (pid < 0) return crashed(std::string("fork: ") + std::strerror(errno), 0);
  if (pid == 0) {
    auto fail = [&](int step) {
      SpawnError e{step, errno};
      ssize_t ignored = ::write(error_write.get(), &e, sizeof(e));
      (void)ignored;
      _exit(127);
    };
    if (::setsid() < 0) fail(kStepSetsid);
    if (::dup2(null_guard.get(), 0) < 0 || ::dup2(log_fd.get(), 1) < 0 ||
        ::dup2(log_fd.get(), 2) < 0) {
      fail(kStepFds);
    }
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    ::umask(007);
    sandbox::ExecSandbox::Step step = box->enter();
    if (step != sandbox::ExecSandbox::Step::kNone) fail(static_cast<int>(step));
    if (::chdir(dir.c_str()) != 0) fail(kStepChdir);
    ::execve(binary, argv.data(), envp.data());
    fail(kStepExec);
  }
  error_write.reset();
  SpawnError e{};
  ssize_t n;
  do {
    n = ::read(error_read.get(), &e, sizeof(e));
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof(e))) {
    ::waitpid(pid, nullptr, 0);
    return crashed("starting " + std::string(binary) + ": " + stepText(e.step, spec_) + ": " +
                       std::strerror(e.err),
                   0);
  }
  Result<UniqueFd> pidfd = openPidfd(pid);
  if (!pidfd.ok()) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return crashed(pidfd.status().message(), 0);
  }
  pid_ = pid;
  pidfd_ = std::move(pidfd).value();
  is_child_ = true;
  adopted_ = false;
  started_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
  state_ = State::kStarting;
  Status written = writeFileAtomically(paths_.pid, std::to_string(pid) + "\n");
  if (!written.ok()) LOG_WARN("app %s: %s", spec_.name.c_str(), written.message().c_str());
  watch();
  deadline_ms_ = uv_now(loop_) + kAppReadyTimeoutMs;
  arm(kReadyPollMs, kReadyPollMs, [](AppProcess& self) { self.onTick(); });
  LOG_INFO("app %s[%u]: started pid %d", spec_.name.c_str(), index_, static_cast<int>(pid));
}

void AppProcess::onTick() {
  if (state_ != State::kStarting) return disarm();
  if (accepts(paths_.socket)) {
    disarm();
    return becameRunning();
  }
  if (uv_now(loop_) < deadline_ms_) return;
  disarm();
  start_problem_ = "did not accept on " + paths_.socket + " within " +
                   std::to_string(kAppReadyTimeoutMs / 1000) + " s";
  ::kill(-pid_, SIGKILL);
}

void AppProcess::becameRunning() {
  state_ = State::kRunning;
  ever_ran_ = true;
  if (first_) std::exchange(first_, nullptr)(Status());
}

// --- exits -------------------------------------------------------------------------------

void AppProcess::onExit() {
  std::optional<std::string> ended = reapExited(pid_, is_child_);
  if (!ended) return;
  if (poll_ != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(poll_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
    poll_ = nullptr;
  }
  pidfd_.reset();
  disarm();
  ::kill(-pid_, SIGKILL);  // gunicorn's and uvicorn's workers go with their master
  pid_t pid = pid_;
  pid_ = 0;
  ::unlink(paths_.pid.c_str());
  uint64_t now = uv_now(loop_);
  uint64_t uptime = now - std::min(now, started_mono_ms_);
  if (state_ == State::kStopping) return finishStop();
  std::string why = "pid " + std::to_string(pid) + " " + *ended;
  if (!start_problem_.empty()) why += ": " + start_problem_;
  if (!ever_ran_) {
    std::string tail = logTail(paths_.log);
    if (!tail.empty()) why += "; its log ends with: " + tail;
  }
  crashed(why, uptime);
}

void AppProcess::crashed(const std::string& why, uint64_t uptime_ms) {
  removeStaleSocket(paths_.socket);
  last_exit_ = why;
  std::string who = "app " + spec_.name + "[" + std::to_string(index_) + "]";
  if (!ever_ran_) {
    // A first start that fails is the caller's to report (`app add` refuses).
    state_ = State::kFailed;
    if (first_) {
      Status error(StatusCode::kFailedPrecondition, who + ": " + why);
      later([this, error] {
        if (first_) std::exchange(first_, nullptr)(error);
      });
    }
    if (on_event_) on_event_("app.failed", who + " did not start: " + why);
    return;
  }
  RestartPolicy::Decision d = policy_.onCrash(0, uv_now(loop_), uptime_ms);
  if (d.give_up) {
    state_ = State::kFailed;
    last_exit_ =
        "crash loop: " + std::to_string(d.crashes_in_window) + " exits in a row, the last: " + why;
    LOG_ERROR("%s: %s; giving up", who.c_str(), last_exit_.c_str());
    if (on_event_) on_event_("app.failed", who + " failed: " + last_exit_);
    if (first_) {  // an `app restart` waiting for it
      Status error(StatusCode::kFailedPrecondition, who + ": " + last_exit_);
      later([this, error] {
        if (first_) std::exchange(first_, nullptr)(error);
      });
    }
    return;
  }
  state_ = State::kBackoff;
  LOG_ERROR("%s: %s; restarting in %llu ms", who.c_str(), why.c_str(),
            static_cast<unsigned long long>(d.delay_ms));
  if (on_event_) {
    on_event_("app.exited",
              who + ": " + why + "; restarting in " + std::to_string(d.delay_ms) + " ms");
  }
  arm(d.delay_ms, 0, [](AppProcess& self) {
    if (self.state_ != State::kBackoff) return;
    ++self.restarts_;
    self.spawn();
  });
}

// --- stopping ----------------------------------------------------------------------------

void AppProcess::stop(Done done) {
  stop_done_.push_back(std::move(done));
  switch (state_) {
    case State::kStopping:
      return;
    case State::kStopped:
    case State::kBackoff:
    case State::kFailed:
      disarm();
      state_ = State::kStopping;
      return later([this] { finishStop(); });
    case State::kStarting:
    case State::kRunning:
      break;
  }
  state_ = State::kStopping;
  ::kill(pid_, SIGTERM);
  arm(kAppStopGraceMs, 0, [](AppProcess& self) {
    if (self.pid_ == 0) return;
    LOG_WARN("app %s[%u]: pid %d did not stop in time; killing it", self.spec_.name.c_str(),
             self.index_, static_cast<int>(self.pid_));
    ::kill(-self.pid_, SIGKILL);
  });
}

void AppProcess::finishStop() {
  if (state_ != State::kStopping) return;
  disarm();
  state_ = State::kStopped;
  removeStaleSocket(paths_.socket);
  ::unlink(paths_.pid.c_str());
  if (first_) {
    Status error(StatusCode::kUnavailable, "app " + spec_.name + " was stopped");
    std::exchange(first_, nullptr)(error);
  }
  std::vector<Done> done = std::move(stop_done_);
  stop_done_.clear();
  for (Done& d : done) d(Status());
}

}  // namespace scalws::controller
