// Recognising a worker that a previous controller started, from the outside. A PID from the DB is
// only trusted when /proc agrees on two things: the process started at the recorded time (field 22
// of /proc/PID/stat, in clock ticks since boot, so a reused PID cannot pass) and it runs `scalwsd
// --instance NAME`. Its attach socket must then be listening, created by that very PID
// (SO_PEERCRED).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::controller {

// Field 22 (starttime) of /proc/PID/stat. kNotFound when the process does not exist.
common::Result<uint64_t> processStartTicks(pid_t pid);

// True when /proc/PID/cmdline is a scalwsd (by basename) with `--instance instance`.
bool runsWorkerOf(pid_t pid, const std::string& instance);
// The same for any of our programs: `program` by basename, with `flag value` in its argv
// (a front: "scalws-front", "--address", "127.0.0.1:443").
bool runsProgramWith(pid_t pid, const std::string& program, const std::string& flag,
                     const std::string& value);

// Connects to the abstract socket `hex_name` (hex without the leading NUL) and checks the
// listener was created by `pid`. The fd is non-blocking and close-on-exec.
common::Result<common::UniqueFd> connectAttachSocket(const std::string& hex_name, pid_t pid);

// pidfd_open / pidfd_getfd with Status errors. pidfd_getfd needs ptrace rights over the
// target (root with CAP_SYS_PTRACE has them); the copy is close-on-exec.
common::Result<common::UniqueFd> openPidfd(pid_t pid);
common::Result<common::UniqueFd> copyFdOf(int pidfd, int target_fd);

}  // namespace scalws::controller
