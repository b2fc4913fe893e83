// What the controller tells systemd and asks it.
//
// Readiness: READY=1 once the host converged on the DB, STOPPING=1 when shutdown begins,
// STATUS=... lines on the way (sd_notify; nothing happens without NOTIFY_SOCKET).
//
// Shutdown: the unit runs with KillMode=process, so systemd signals the controller only
// and the workers survive whatever it does. What SIGTERM means is then the controller's
// choice, and it depends on why systemd sent it:
//   - `systemctl stop` (and system shutdown): a stop job is running on our unit → stop
//     every instance gracefully, then exit. Desired states stay "running" in the DB, so the
//     next start brings them back.
//   - `systemctl restart` (an upgrade, a config change of the unit): a restart job is
//     running → exit and leave the workers serving; the next controller re-attaches to them
//     without a gap in service.
// The job type comes from systemd's D-Bus API (the Job property of our unit). Outside
// systemd, or when the question cannot be answered, SIGTERM stops the instances (the
// conservative reading of "terminate"). SIGINT (Ctrl-C in a terminal) always stops them;
// SIGUSR2 always leaves them serving (a hand-run upgrade). A crash leaves them serving by
// construction: nothing runs to stop them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace scalws::controller {

enum class ShutdownMode { kStopInstances, kLeaveInstances };

// Pure: the decision described above. job_type: systemd's JobType of our unit's current
// job ("stop", "restart", "try-restart", ...), nullopt when unknown or none.
ShutdownMode shutdownModeFor(int signum, const std::optional<std::string>& job_type);
std::string_view shutdownModeName(ShutdownMode mode);

// sd_notify(0, state) when NOTIFY_SOCKET is set.
void notifySystemd(const std::string& state);

// The JobType of the job systemd is running on this process's unit, asked over the system
// bus with a 1 s timeout. nullopt: not in a systemd unit, no job, or no answer.
std::optional<std::string> systemdJobType();

}  // namespace scalws::controller
