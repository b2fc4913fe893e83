// What the controller checks itself about a worker, in /proc/PID/status: its uids and gids
// (real, effective, saved, filesystem), NoNewPrivs, its seccomp mode and its effective
// capabilities. `instance show` prints these as fact, beside the sandbox report the worker
// sent with `ready` (its own word).
#pragma once

#include <sys/types.h>

#include "ipc/message.h"

namespace scalws::controller {

// {uid:[4], gid:[4], user, no_new_privs, seccomp:"off"|"strict"|"filter",
//  capabilities:"none"|hex}, or {error} when the file cannot be read (the process is gone).
ipc::Json processFacts(pid_t pid);

}  // namespace scalws::controller
