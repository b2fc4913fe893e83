// Listening sockets as DESIGN.md wants them: SO_REUSEPORT so every worker (process or loop)
// has its own accept queue, non-blocking and close-on-exec, IPv6 sockets v6-only.
#pragma once

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::worker {

common::Result<int> openListenSocket(const common::config::ListenConfig& listen);

}  // namespace scalws::worker
