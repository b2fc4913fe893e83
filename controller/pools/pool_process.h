// PoolProcess: one managed php-fpm master, run and watched by the controller.
//
// php-fpm runs in the foreground (`PHP_FPM -F -y CONF`, pool_fpm_config.h) in a session of
// its own (setsid: a terminal's Ctrl-C reaches the controller only), with a clean
// environment (no NOTIFY_SOCKET: php-fpm would otherwise report to the controller's
// systemd unit), stdin on /dev/null and stdout/stderr on the pool's log FIFO, which the
// controller copies to a capped, rotated php-fpm.log (fifo_log.h). Its exit
// is seen through a pidfd, so a master left by a previous controller (adopted from its pid
// file) is watched the same way as one started here.
//
// It is up once its socket accepts a connection. When the master dies its children
// (orphans, still accepting on the old socket) are killed with it (they share its process
// group), the stale socket is removed, and:
//   - a first start (startOnce, for `pool add`) that fails reports why (exit status and the
//     log's last lines) and leaves nothing running;
//   - a supervised master (after a first start succeeded, or supervise() at controller
//     start) is started again after the backoff of restart_policy.h (100 ms doubling to
//     30 s, a fresh sequence after 10 s up), for ever: a pool the DB holds should run, and
//     `pool show` says how it is doing.
// stop() asks for a graceful stop (SIGQUIT: requests in flight finish within php-fpm's
// process_control_timeout) and SIGKILLs the group kStopGraceMs later. leave() lets go:
// php-fpm keeps serving the sites that outlive the controller, and the next controller
// adopts it.
//
// The life cycle itself (readiness, backoff, stop, adoption) is supervised_child.h's; this
// adds what is php-fpm's. Callbacks and Done fire on the loop thread, never from inside the
// call that was made.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "controller/fifo_log.h"
#include "controller/restart_policy.h"
#include "controller/supervised_child.h"
#include "ipc/message.h"

namespace scalws::controller {

inline constexpr uint64_t kPoolReadyTimeoutMs = 10'000;
inline constexpr uint64_t kPoolStopGraceMs = 15'000;  // php-fpm's own timeout is 10 s

struct PoolPaths {
  std::string config;  // php-fpm.conf
  std::string pid;     // written by the master
  std::string log;     // its log (php-fpm.log, rotated to php-fpm.log.1: fifo_log.h)
  std::string pipe;    // the FIFO php-fpm writes its log and stderr to
  std::string socket;  // where it listens
};

class PoolProcess {
 public:
  using State = SupervisedChild::State;  // never kFailed: a pool restarts for ever
  using Done = SupervisedChild::Done;

  struct Hooks {
    // Called before every spawn: writes php-fpm.conf from the DB as it is now.
    std::function<common::Status()> prepare;
    // Each time php-fpm accepts (after a start, a restart or an adoption).
    std::function<void()> on_running;
    // Something worth the event log happened ("pool.exited", "why").
    std::function<void(std::string_view kind, const std::string& message)> on_event;
  };

  PoolProcess(uv_loop_t* loop, std::string name, PoolPaths paths, std::string php_fpm,
              RestartLimits limits, Hooks hooks, uint64_t log_cap = kDefaultPoolLogCap);
  // Stops watching; the process itself is not signalled (stop() or leave() first).
  ~PoolProcess();
  PoolProcess(const PoolProcess&) = delete;
  PoolProcess& operator=(const PoolProcess&) = delete;

  void startOnce(Done ready);
  // Adopts the master named by the pid file when it is ours (its title names our config),
  // else starts one; `first` gets the first attempt's outcome (supervision goes on either
  // way).
  void supervise(Done first);
  void stop(Done done) { child_.stop(std::move(done)); }
  void leave();

  State state() const { return child_.state(); }
  std::string_view stateName() const { return child_.stateName(); }
  pid_t pid() const { return child_.pid(); }
  const PoolPaths& paths() const { return paths_; }
  // {state, pid, restarts, last_exit, started_ms, adopted, restart_in_ms (in backoff)}
  ipc::Json status() const;

  // The master whose pid file and process title match `paths`, if it runs; 0 otherwise.
  static pid_t findOurMaster(const PoolPaths& paths);

 private:
  common::Result<pid_t> launch();

  std::string name_;
  PoolPaths paths_;
  std::string php_fpm_;
  std::function<common::Status()> prepare_;
  FifoLog log_;
  SupervisedChild child_;  // last: its hooks use the members above
};

}  // namespace scalws::controller
