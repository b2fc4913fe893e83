// Making the Unix stream sockets IPC runs on. Every fd returned is O_CLOEXEC and
// O_NONBLOCK; a child that must inherit one (scalwsd --ipc-fd N) clears FD_CLOEXEC itself
// between fork and exec.
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::ipc {

// A connected pair (controller end, worker end).
common::Result<std::pair<common::UniqueFd, common::UniqueFd>> socketPair();

// Binds and listens at `path` (replacing a stale socket file there, never another kind of
// file). File mode and group are the caller's to set (chmod/chown the path).
common::Result<common::UniqueFd> listenUnix(const std::string& path, int backlog = 64);

// Connects to `path`; retries while the listener's backlog is full, up to `timeout`.
// kNotFound when nothing is there, kUnavailable when nobody listens, kTimeout.
common::Result<common::UniqueFd> connectUnix(const std::string& path,
                                             std::chrono::milliseconds timeout);

}  // namespace scalws::ipc
