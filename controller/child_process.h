// Small helpers for the processes the controller runs (workers, php-fpm masters, apps): the
// wall clock their start times are kept in, how an exit is told, and the checks on the
// sockets and files they leave behind.
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

// True when something listens on the unix socket `path` (a full backlog counts: EAGAIN).
bool socketAccepts(const std::string& path);
// Removes a socket a dead process left at `path`: a new one refuses to bind over a path
// that still exists, and a dead one would only mislead socketAccepts().
void removeStaleSocket(const std::string& path);
// The whole of a small file (a pid file, /proc/PID/status); empty when unreadable.
std::string readSmallFile(const std::string& path);

}  // namespace scalws::controller
