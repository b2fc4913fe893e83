// spawnApp: the fork and exec of one app process (app_process.h supervises it).
//
// The child, in this order: joins its memory cgroup (writes "0" to the cgroup.procs the
// parent opened; before anything it allocates is charged elsewhere), makes a session of its
// own (its group is killed with it), takes stdin from /dev/null and gives stdout and stderr
// to the app's log FIFO (fifo_log.h), keeps a read end of that FIFO open (never used: while
// no controller reads, the app's writes wait once the FIFO is full instead of failing with
// EPIPE, which ends a Node.js process that writes to its stdout), resets its signals, sets
// umask 007, enters the ExecSandbox (user, groups, no_new_privs, Landlock, seccomp
// deny-list), changes to the app's directory and execs with exactly `env`. A step that
// fails is reported through a close-on-exec pipe, so the caller can say which.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "sandbox/exec_sandbox.h"

namespace scalws::controller {

struct AppSpawn {
  std::vector<std::string> argv;  // argv[0]: the binary, absolute
  std::vector<std::string> env;
  std::string dir;       // its working directory
  std::string log_pipe;  // the FIFO its stdout and stderr go to (a reader must hold it open)
  std::string cgroup;    // "" or the cgroup it joins
  const sandbox::ExecSandbox* sandbox = nullptr;
};

// The pid of the child, which has exec'd; else "starting BINARY: STEP: why" (the child is
// reaped).
common::Result<pid_t> spawnApp(const AppSpawn& spawn);

}  // namespace scalws::controller
