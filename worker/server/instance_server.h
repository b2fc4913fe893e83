// scalwsd's instance mode: a worker started by scalws-controller.
// It receives its config and listener sockets over the channel (instance_session.h),
// sandboxes itself as the instance's user, serves with one loop (multi) or one loop per
// CPU (single), and never binds, forks or execs. SIGTERM/SIGINT stop it gracefully, as a
// `stop` from the controller does; SIGHUP is ignored (the controller reloads).
#pragma once

#include <string>

namespace scalws::worker {

// Takes ownership of ipc_fd (the channel) and attach_fd (-1: none). Returns the exit code:
// 0 after a graceful stop, 1 when it could not serve.
int runInstanceWorker(const std::string& instance, int ipc_fd, int attach_fd);

}  // namespace scalws::worker
