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
#include "controller/apps/app_spawn.h"
#include "controller/child_process.h"
#include "controller/deferred_call.h"
#include "controller/instances/process_facts.h"
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
  std::string text = readFileTail(path, 600);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t cut = text.size();
  for (int lines = 0; lines < 3 && cut != std::string::npos && cut > 0; ++lines) {
    cut = text.rfind('\n', cut - 1);
  }
  if (cut != std::string::npos && cut < text.size()) text = text.substr(cut + 1);
  for (char& c : text) c = c == '\n' ? '|' : c;
  return text;
}

std::string mebibytes(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

AppProcess::AppProcess(uv_loop_t* loop, AppSpec spec, uint32_t index, AppProcessPaths paths,
                       RestartLimits limits, PrepareSandbox prepare, OnEvent on_event, FifoLog& log,
                       AppCgroups& cgroups)
    : loop_(loop),
      spec_(std::move(spec)),
      index_(index),
      paths_(std::move(paths)),
      policy_(limits),
      prepare_(std::move(prepare)),
      on_event_(std::move(on_event)),
      log_(log),
      cgroups_(cgroups) {}

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
  if (pid_ > 0) out["checked"] = processFacts(pid_);
  if (!cgroup_.empty()) {
    ipc::Json memory = {{"cgroup", cgroup_}, {"oom_kills", oom_kills_}};
    if (pid_ > 0) memory["in_cgroup"] = cgroups_.contains(cgroup_, pid_);
    if (std::optional<CgroupUsage> u = cgroups_.usage(cgroup_)) {
      memory["limit_bytes"] = u->limit_bytes;
      memory["current_bytes"] = u->current_bytes;
      memory["peak_bytes"] = u->peak_bytes;
    }
    out["memory"] = std::move(memory);
  }
  return out;
}

// Counts the OOM kills of its cgroup since the last look; the reason of an exit they
// caused, or "".
std::string AppProcess::memoryKill() {
  if (cgroup_.empty()) return "";
  std::optional<CgroupUsage> u = cgroups_.usage(cgroup_);
  if (!u || u->oom_kills <= oom_seen_) return oom_group_killed_ ? "killed for memory" : "";
  oom_kills_ += u->oom_kills - oom_seen_;
  oom_seen_ = u->oom_kills;
  return "killed for memory: its cgroup reached --memory " + mebibytes(spec_.memory_bytes) +
         " (the kernel's OOM killer; " + std::to_string(oom_kills_) + " OOM kill(s) so far)";
}

void AppProcess::checkMemory() {
  if (cgroup_.empty() || pid_ <= 0 || oom_group_killed_) return;
  if (state_ != State::kRunning && state_ != State::kStarting) return;
  std::optional<CgroupUsage> u = cgroups_.usage(cgroup_);
  if (!u || u->oom_kills <= oom_seen_) return;
  LOG_WARN(
      "app %s[%u]: the OOM killer ended a process of its cgroup (--memory %s); ending "
      "the rest (pid %d's group)",
      spec_.name.c_str(), index_, mebibytes(spec_.memory_bytes).c_str(), static_cast<int>(pid_));
  oom_group_killed_ = true;
  ::kill(-pid_, SIGKILL);
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
  watchCgroup();
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
  cgroup_.clear();
  if (spec_.memory_bytes != 0) {
    Status made = cgroups_.prepare(spec_.name, index_, spec_.memory_bytes);
    if (!made.ok()) return crashed("cannot prepare its memory cgroup: " + made.message(), 0);
  }
  removeStaleSocket(paths_.socket);
  AppSpawn spawn;
  spawn.argv = appArgv(spec_, paths_.socket);
  spawn.env = appEnv(spec_, paths_.socket, paths_.tmp);
  spawn.dir = spec_.dir;
  spawn.log_pipe = paths_.pipe;
  if (spec_.memory_bytes != 0) spawn.cgroup = cgroups_.pathOf(spec_.name, index_);
  spawn.sandbox = &*box;
  Result<pid_t> pid = spawnApp(spawn);
  if (!pid.ok()) return crashed(pid.status().message(), 0);
  Result<UniqueFd> pidfd = openPidfd(*pid);
  if (!pidfd.ok()) {
    ::kill(-*pid, SIGKILL);
    ::waitpid(*pid, nullptr, 0);
    return crashed(pidfd.status().message(), 0);
  }
  pid_ = *pid;
  pidfd_ = std::move(pidfd).value();
  is_child_ = true;
  adopted_ = false;
  watchCgroup();
  started_ms_ = wallMs();
  started_mono_ms_ = uv_now(loop_);
  state_ = State::kStarting;
  Status written = writeFileAtomically(paths_.pid, std::to_string(pid_) + "\n");
  if (!written.ok()) LOG_WARN("app %s: %s", spec_.name.c_str(), written.message().c_str());
  watch();
  deadline_ms_ = uv_now(loop_) + kAppReadyTimeoutMs;
  arm(kReadyPollMs, kReadyPollMs, [](AppProcess& self) { self.onTick(); });
  LOG_INFO("app %s[%u]: started pid %d", spec_.name.c_str(), index_, static_cast<int>(pid_));
}

// The cgroup a process of this spec is in: its OOM kills from now on are this process's.
void AppProcess::watchCgroup() {
  oom_group_killed_ = false;
  if (spec_.memory_bytes == 0) return;
  cgroup_ = cgroups_.pathOf(spec_.name, index_);
  std::optional<CgroupUsage> u = cgroups_.usage(cgroup_);
  oom_seen_ = u ? u->oom_kills : 0;
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
  std::string memory = memoryKill();
  if (!memory.empty()) why += ": " + memory;
  if (!start_problem_.empty()) why += ": " + start_problem_;
  if (!ever_ran_) {
    log_.drain();
    std::string tail = logTail(log_.path());
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
