// SupervisedChild: the life cycle the controller gives a long-running service process it
// starts and keeps up (an app's process, a pool's php-fpm master); its owner supplies only
// what differs, in Hooks and SupervisedChildConfig.
//
// Start: the owner's launch hook forks and execs (after the stale socket is removed); the
// child is watched through a pidfd. start(adopt) first asks the adoptable hook for a
// process a previous controller left; the pidfd pins it, and the hook is asked again with
// the pidfd held, so a reused PID cannot pass. Up (kRunning) once its Unix socket accepts;
// not accepting within ready_timeout_ms kills its group and counts as an exit.
//
// An exit not asked for kills its process group (the workers of a master outlive it), the
// stale socket (and the pid file, when ours) is removed and it is started again after the
// backoff of restart_policy.h, unless it never ran since the owner said so (a first start,
// see setSupervised): then the waiting Done gets why, with the end of its log. With
// gives_up, the crash_limit-th exit within the window gives up (kFailed) and a failed
// first start is kFailed too; without it, restarts go on for ever and a failed first start
// leaves it kStopped.
//
// stop(): stop_signal to the process, SIGKILL to its group stop_grace_ms later; every Done
// given to stop() fires once it is gone. leave(): lets go, the process keeps running.
// Callbacks and Done fire on the loop thread, never from inside the call that was made;
// hooks are called from within this object's own calls.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/loop_handles.h"
#include "controller/restart_policy.h"
#include "ipc/message.h"

namespace scalws::controller {

struct SupervisedChildConfig {
  std::string who;              // "app NAME[0]", "pool NAME": in log lines and events
  std::string program;          // "php-fpm": exits read "php-fpm (pid N) ..."; "": "pid N ..."
  std::string event_kind;       // events are "<event_kind>.exited" and "<event_kind>.failed"
  std::string error_prefix;     // starts the message a waiting Done gets when it failed
  std::string stopped_message;  // what a waiting Done gets when stop() came first
  std::string socket;           // up once it accepts here
  std::string pid_file;  // written after a spawn and removed at its exit; "": the program's own
  uint64_t ready_timeout_ms = 10'000;
  uint64_t stop_grace_ms = 10'000;
  int stop_signal = SIGTERM;
  bool gives_up = false;
};

class SupervisedChild {
 public:
  // In the order stateName() names them: "stopped", "starting", "running", "restarting",
  // "stopping", "failed".
  enum class State { kStopped, kStarting, kRunning, kBackoff, kStopping, kFailed };
  using Done = std::function<void(const common::Status&)>;

  struct Hooks {
    // Prepares and forks the process; its pid, or why not (a failed attempt).
    std::function<common::Result<pid_t>()> launch;
    // The pid of a running process that is ours to adopt, or 0.
    std::function<pid_t()> adoptable;
    // A process was spawned or adopted (pid() and adopted() tell which).
    std::function<void()> on_started;
    // Each time it accepts (after a start, a restart or an adoption).
    std::function<void()> on_running;
    // At an exit not asked for: what caused it, when known ("" otherwise).
    std::function<std::string()> exit_cause;
    // At an exit not asked for: the end of its log to quote, or "".
    std::function<std::string(bool was_starting)> log_tail;
    // Something worth the event log happened ("app.exited", "why").
    std::function<void(std::string_view kind, const std::string& message)> on_event;
  };

  SupervisedChild(uv_loop_t* loop, SupervisedChildConfig config, RestartLimits limits, Hooks hooks);
  ~SupervisedChild();  // lets go (leave)
  SupervisedChild(const SupervisedChild&) = delete;
  SupervisedChild& operator=(const SupervisedChild&) = delete;

  // Whether a failed start is restarted (true) or reported to the waiting Done (false).
  // Starts false; becomes true each time the process accepts.
  void setSupervised(bool supervised) { supervised_ = supervised; }
  // Forgets earlier crashes (an operator asked for this start).
  void resetRestarts() { policy_.reset(); }
  // On the next loop turn: adopts a running one when `adopt` and adoptable names one, else
  // spawns. `first` gets the outcome of this start (ok once it accepts).
  void start(bool adopt, Done first);
  void stop(Done done);
  void leave();

  State state() const { return state_; }
  std::string_view stateName() const;
  pid_t pid() const { return pid_; }
  bool adopted() const { return adopted_; }
  bool supervised() const { return supervised_; }
  // While in backoff: how long until the restart; nullopt otherwise.
  std::optional<uint64_t> restartInMs() const;
  // {state, pid, restarts, last_exit, started_ms, adopted}
  ipc::Json status() const;

 private:
  void spawn();
  bool adopt();
  void watch();
  void onExit();
  void onTick();
  void becameRunning();
  void failed(const std::string& why, uint64_t uptime_ms);
  void failFirstLater(common::Status error);
  void finishStop();
  void arm(uint64_t ms, uint64_t repeat, void (*fire)(SupervisedChild&));
  void later(std::function<void()> fn);
  std::string label(pid_t pid) const;

  uv_loop_t* loop_;
  SupervisedChildConfig config_;
  RestartPolicy policy_;
  Hooks hooks_;
  State state_ = State::kStopped;
  bool supervised_ = false;
  pid_t pid_ = 0;
  bool is_child_ = false;
  bool adopted_ = false;
  common::UniqueFd pidfd_;
  FdWatch exit_watch_{loop_};  // the pidfd
  LoopTimer timer_{loop_};
  uint64_t deadline_ms_ = 0;  // kStarting: readiness; kBackoff: the restart
  uint64_t started_mono_ms_ = 0;
  int64_t started_ms_ = 0;
  uint32_t restarts_ = 0;
  std::string last_exit_;
  std::string start_problem_;  // why the current start was given up (readiness timeout)
  Done first_;
  std::vector<Done> stop_done_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace scalws::controller
