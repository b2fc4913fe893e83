// AppProcess: one process of an app (a node process, or a gunicorn/uvicorn master with its
// workers), started sandboxed and supervised by the controller.
//
// Start: the ExecSandbox (sandbox/exec_sandbox.h) is prepared here and, with --memory, its
// cgroup (app_cgroup.h: made or kept, the limit written); then app_spawn.h forks and execs
// it sandboxed, its stdout and stderr going to the app's log FIFO (fifo_log.h). A step that
// fails is reported, so `app add` says why. The pid goes to a pid file; a controller that
// starts later adopts a process whose pid file and /proc cmdline still match and that runs
// as no root uid, so apps keep serving across a controller restart (in the cgroup they
// were in).
//
// Up once its socket accepts. On an exit it did not ask for, its group is killed (gunicorn's
// workers outlive their master), the stale socket removed and it is started again after the
// backoff of restart_policy.h; the crash_limit-th exit within the window gives up: state
// `failed`, with the last exit as the reason (`app restart` tries again). An exit after the
// cgroup's OOM kill count rose is told as killed for memory. checkMemory() ends the whole
// group once the OOM killer took one process of it (cgroup v1 kills one; v2's
// memory.oom.group all), so the app restarts whole rather than limping on, and ends it
// too when its cgroup thrashes at the limit where the OOM killer does not act
// (memory_thrash.h).
// stop(): SIGTERM (gunicorn, uvicorn and Node end gracefully on it), SIGKILL to the group
// kAppStopGraceMs later. leave(): lets go, the process keeps serving. The life cycle itself
// (readiness, backoff, stop, adoption) is supervised_child.h's; this adds what is an app's.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <functional>
#include <string>

#include "common/status.h"
#include "controller/apps/app_cgroup.h"
#include "controller/apps/app_spec.h"
#include "controller/apps/memory_thrash.h"
#include "controller/fifo_log.h"
#include "controller/restart_policy.h"
#include "controller/supervised_child.h"
#include "ipc/message.h"
#include "sandbox/exec_sandbox.h"

namespace scalws::controller {

inline constexpr uint64_t kAppReadyTimeoutMs = 15'000;
inline constexpr uint64_t kAppStopGraceMs = 10'000;

struct AppProcessPaths {
  std::string socket;
  std::string pid;
  std::string pipe;  // its stdout and stderr, a FIFO the app's FifoLog reads
  std::string tmp;   // its TMPDIR
};

class AppProcess {
 public:
  using State = SupervisedChild::State;
  using Done = SupervisedChild::Done;
  using OnEvent = std::function<void(std::string_view kind, const std::string& message)>;
  // Builds the sandbox anew before each start (the spec or the assignment may have moved).
  using PrepareSandbox = std::function<common::Result<sandbox::ExecSandbox>()>;

  // `log` (the app's, shared by its processes) and `cgroups` outlive it; `cgroups` is used
  // when the spec has a memory limit.
  AppProcess(uv_loop_t* loop, AppSpec spec, uint32_t index, AppProcessPaths paths,
             RestartLimits limits, PrepareSandbox prepare, OnEvent on_event, FifoLog& log,
             AppCgroups& cgroups);
  ~AppProcess();  // lets go (leave)
  AppProcess(const AppProcess&) = delete;
  AppProcess& operator=(const AppProcess&) = delete;

  // Starts it (adopting one that runs already when `adopt`); `first` gets the first
  // attempt's outcome; supervision goes on either way once it ran.
  void start(bool adopt, Done first);
  void stop(Done done) { child_.stop(std::move(done)); }
  void leave() { child_.leave(); }

  State state() const { return child_.state(); }
  std::string_view stateName() const { return child_.stateName(); }
  pid_t pid() const { return child_.pid(); }
  const AppProcessPaths& paths() const { return paths_; }
  // {index, state, pid, restarts, last_exit, started_ms, adopted, socket, rss_bytes,
  //  checked: process_facts.h's reading of /proc/PID/status (while it runs),
  //  memory: {cgroup, in_cgroup, limit_bytes, current_bytes, peak_bytes, oom_kills,
  //  thrash_kills} (with --memory)}
  ipc::Json status() const;
  // Ends the process group when its cgroup's OOM kill count rose or it thrashes (above).
  void checkMemory();

 private:
  common::Result<pid_t> launch();
  pid_t adoptable() const;
  std::string memoryKill();
  void watchCgroup();
  std::string expectedCmdline() const;

  AppSpec spec_;
  uint32_t index_;
  AppProcessPaths paths_;
  PrepareSandbox prepare_;
  FifoLog& log_;
  AppCgroups& cgroups_;
  std::string cgroup_;      // "" without --memory
  uint64_t oom_seen_ = 0;   // the cgroup's OOM kill count already accounted for
  uint64_t oom_kills_ = 0;  // of this process's cgroup, since this controller watched it
  bool oom_group_killed_ = false;
  ThrashWatch thrash_;
  uint64_t thrash_kills_ = 0;
  std::string thrash_kill_;  // why checkMemory() ended it for thrashing, until it restarts
  SupervisedChild child_;    // last: its hooks use the members above
};

}  // namespace scalws::controller
