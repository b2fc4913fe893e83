// Small helpers for the processes the controller runs (workers, php-fpm masters): the wall
// clock their start times are kept in, and how an exit is told.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace scalws::controller {

// Now, in Unix milliseconds.
int64_t wallMs();

// "exited with status 3", "killed by signal 9 (SIGKILL)".
std::string describeWait(int status);

// Reaps `pid`, a child of ours whose pidfd turned readable: how it ended, or nullopt when
// it cannot be reaped yet (the pidfd stays readable; try again on the next wake-up). A
// process that is not our child (adopted) is told as "exited".
std::optional<std::string> reapExited(pid_t pid, bool is_child);

}  // namespace scalws::controller
