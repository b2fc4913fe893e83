#include "controller/apps/app_process.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/log.h"
#include "controller/apps/app_spawn.h"
#include "controller/child_process.h"
#include "controller/instances/process_facts.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;

namespace {

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

std::string mebibytes(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

AppProcess::AppProcess(uv_loop_t* loop, AppSpec spec, uint32_t index, AppProcessPaths paths,
                       RestartLimits limits, PrepareSandbox prepare, OnEvent on_event, FifoLog& log,
                       AppCgroups& cgroups)
    : spec_(std::move(spec)),
      index_(index),
      paths_(std::move(paths)),
      prepare_(std::move(prepare)),
      log_(log),
      cgroups_(cgroups),
      thrash_(static_cast<uint64_t>(::sysconf(_SC_PAGESIZE))),
      child_(loop,
             SupervisedChildConfig{
                 .who = "app " + spec_.name + "[" + std::to_string(index_) + "]",
                 .program = "",
                 .event_kind = "app",
                 .error_prefix = "app " + spec_.name + "[" + std::to_string(index_) + "]",
                 .stopped_message = "app " + spec_.name + " was stopped",
                 .socket = paths_.socket,
                 .pid_file = paths_.pid,
                 .ready_timeout_ms = kAppReadyTimeoutMs,
                 .stop_grace_ms = kAppStopGraceMs,
                 // gunicorn, uvicorn and Node end gracefully on it
                 .stop_signal = SIGTERM,
                 .gives_up = true,
             },
             limits,
             SupervisedChild::Hooks{
                 .launch = [this] { return launch(); },
                 .adoptable = [this] { return adoptable(); },
                 .on_started = [this] { watchCgroup(); },
                 .on_running = nullptr,
                 .exit_cause = [this] { return memoryKill(); },
                 .log_tail = [this](bool) -> std::string {
                   // Quoted while it never ran: why `app add` fails.
                   if (child_.supervised()) return "";
                   log_.drain();
                   return lastLogLines(log_.path(), 600);
                 },
                 .on_event = std::move(on_event),
             }) {}

AppProcess::~AppProcess() = default;

ipc::Json AppProcess::status() const {
  pid_t pid = child_.pid();
  ipc::Json out = child_.status();
  out["index"] = index_;
  out["socket"] = paths_.socket;
  out["rss_bytes"] = pid > 0 ? rssBytes(pid) : 0;
  if (pid > 0) out["checked"] = processFacts(pid);
  if (!cgroup_.empty()) {
    ipc::Json memory = {
        {"cgroup", cgroup_}, {"oom_kills", oom_kills_}, {"thrash_kills", thrash_kills_}};
    if (pid > 0) memory["in_cgroup"] = cgroups_.contains(cgroup_, pid);
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
  if (!u || u->oom_kills <= oom_seen_) {
    if (!thrash_kill_.empty()) return thrash_kill_;
    return oom_group_killed_ ? "killed for memory" : "";
  }
  oom_kills_ += u->oom_kills - oom_seen_;
  oom_seen_ = u->oom_kills;
  return "killed for memory: its cgroup reached --memory " + mebibytes(spec_.memory_bytes) +
         " (the kernel's OOM killer; " + std::to_string(oom_kills_) + " OOM kill(s) so far)";
}

void AppProcess::checkMemory() {
  pid_t pid = child_.pid();
  if (cgroup_.empty() || pid <= 0 || oom_group_killed_) return;
  if (state() != State::kRunning && state() != State::kStarting) return;
  std::optional<CgroupUsage> u = cgroups_.usage(cgroup_);
  if (!u) return;
  if (u->oom_kills > oom_seen_) {
    LOG_WARN(
        "app %s[%u]: the OOM killer ended a process of its cgroup (--memory %s); ending "
        "the rest (pid %d's group)",
        spec_.name.c_str(), index_, mebibytes(spec_.memory_bytes).c_str(), static_cast<int>(pid));
  } else if (thrash_.thrashing(*u)) {
    ++thrash_kills_;
    thrash_kill_ = "killed for memory: its cgroup thrashed at --memory " +
                   mebibytes(spec_.memory_bytes) + " for " + std::to_string(kThrashLooks) +
                   " s, rereading " + mebibytes(thrash_.refaultedBytesPerLook()) +
                   "/s of evicted pages without an OOM kill (" + std::to_string(thrash_kills_) +
                   " thrash kill(s) so far)";
    LOG_WARN("app %s[%u]: %s; ending pid %d's group", spec_.name.c_str(), index_,
             thrash_kill_.c_str(), static_cast<int>(pid));
  } else {
    return;
  }
  oom_group_killed_ = true;
  ::kill(-pid, SIGKILL);
}

// --- starting ----------------------------------------------------------------------------

void AppProcess::start(bool adopt_running, Done first) {
  child_.resetRestarts();
  child_.start(adopt_running, std::move(first));
}

std::string AppProcess::expectedCmdline() const {
  std::string out;
  for (const std::string& a : appArgv(spec_, paths_.socket)) out += a + '\0';
  return out;
}

pid_t AppProcess::adoptable() const {
  long pid = std::strtol(readSmallFile(paths_.pid).c_str(), nullptr, 10);
  if (pid <= 1) return 0;
  bool ours = readSmallFile("/proc/" + std::to_string(pid) + "/cmdline") == expectedCmdline() &&
              uidOf(static_cast<pid_t>(pid)) > 0;
  return ours ? static_cast<pid_t>(pid) : 0;
}

Result<pid_t> AppProcess::launch() {
  Result<sandbox::ExecSandbox> box = prepare_();
  if (!box.ok()) {
    return Status(StatusCode::kFailedPrecondition,
                  "cannot prepare its sandbox: " + box.status().message());
  }
  cgroup_.clear();
  if (spec_.memory_bytes != 0) {
    Status made = cgroups_.prepare(spec_.name, index_, spec_.memory_bytes);
    if (!made.ok()) {
      return Status(StatusCode::kFailedPrecondition,
                    "cannot prepare its memory cgroup: " + made.message());
    }
  }
  AppSpawn spawn;
  spawn.argv = appArgv(spec_, paths_.socket);
  spawn.env = appEnv(spec_, paths_.socket, paths_.tmp);
  spawn.dir = spec_.dir;
  spawn.log_pipe = paths_.pipe;
  if (spec_.memory_bytes != 0) spawn.cgroup = cgroups_.pathOf(spec_.name, index_);
  spawn.sandbox = &*box;
  return spawnApp(spawn);
}

// The cgroup a process of this spec is in: its OOM kills from now on are this process's.
void AppProcess::watchCgroup() {
  oom_group_killed_ = false;
  thrash_.reset();
  thrash_kill_.clear();
  if (spec_.memory_bytes == 0) return;
  cgroup_ = cgroups_.pathOf(spec_.name, index_);
  std::optional<CgroupUsage> u = cgroups_.usage(cgroup_);
  oom_seen_ = u ? u->oom_kills : 0;
}

}  // namespace scalws::controller
