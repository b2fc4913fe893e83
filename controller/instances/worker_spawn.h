// Starting one scalwsd worker: fork, set the child up, exec
// `scalwsd --instance NAME --ipc-fd 3 --attach-fd 4` (or a front, see SpawnSpec).
//
// Between fork and exec the child, still a copy of the controller:
//   - starts a new session (setsid), so a terminal's Ctrl-C or a hang-up reaches the
//     controller only, which then stops its workers the graceful way;
//   - sets its CPU affinity: one CPU for a multi-mode worker, the instance's set for a
//     single-mode one (a sandboxed worker may not change it later);
//   - makes the attach socket: an AF_UNIX stream socket autobound to an abstract name and
//     listening, so its creator (SO_PEERCRED of a connection to it) is the worker itself;
//     a controller started after this one dies connects there (instance_session.h);
//   - puts the channel on fd 3, the attach socket on fd 4, /dev/null on stdin, a pipe the
//     controller reads on stdout and stderr (worker_log.h: its lines reach the journal
//     prefixed with its instance and pid, never as the controller's own), marks every
//     other fd close-on-exec, unblocks signals.
// Nothing else is inherited: no PR_SET_PDEATHSIG (workers must outlive the controller).
// A failure before exec comes back through a close-on-exec pipe as this call's error.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/cpu_set.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::controller {

struct SpawnSpec {
  std::string scalwsd;  // absolute path of the worker binary
  std::string instance;
  common::CpuSet cpus;  // the child's affinity; empty: inherited
  // The flag `instance` follows on the command line: a shared address's front is the same
  // kind of child, `scalws-front --address ADDR --ipc-fd 3 --attach-fd 4`.
  std::string name_flag = "--instance";
};

struct SpawnedWorker {
  pid_t pid = -1;
  common::UniqueFd pidfd;    // readable once the process exits
  common::UniqueFd channel;  // the controller's end of the socketpair
  common::UniqueFd log;      // the read end of its stdout/stderr pipe (invalid: none)
};

common::Result<SpawnedWorker> spawnWorker(const SpawnSpec& spec);

// The fd numbers the child sees (and its argv names).
inline constexpr int kWorkerChannelFd = 3;
inline constexpr int kWorkerAttachFd = 4;

}  // namespace scalws::controller
