// The php-fpm configuration the controller writes for a managed PHP pool.
//
// One php-fpm master per managed pool, started by the controller in the foreground
// (`php-fpm -F -y CONF`) as root, like the distribution's service: the master stays root
// so it can create the socket with the right owner and start children as `user`; PHP
// itself only ever runs as that user (never root: `pool add` refuses it).
//
// Files, per pool, in <state dir>/pools/NAME/ (root's, mode 0750, like the state dir):
// php-fpm.conf (rewritten before every start from the DB), php-fpm.pid (written by the
// master; a later controller adopts the master it names), php-fpm.pipe (a FIFO: the
// master's error_log, stdout and stderr) and php-fpm.log (+ .1), the controller's capped
// copy of what comes through it (fifo_log.h). The socket lives elsewhere (the
// controller's --pool-dir, default /run/scalws/php, mode 0711): the workers must reach it
// and the state dir is closed.
//
// Permissions: the socket belongs to the pool's user, its group is the primary group of the
// user the assigned instance's workers run as (the pool user's own group for a pool never
// assigned), mode 0660: that instance's workers (and root) can connect, other tenants
// cannot. `pool assign` changes the group of the live socket at once (pool_manager.h).
//
// pm = static with pm.max_children = processes: the workers keep FastCGI connections
// (max_conns = processes) and a kept connection holds a child.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace scalws::controller {

struct FpmConfig {
  std::string pool;          // the pool's name: the php-fpm pool section and process titles
  std::string user;          // PHP runs as this user ...
  std::string group;         // ... and its primary group
  std::string socket_path;   // absolute
  std::string socket_group;  // the group allowed to connect
  uint32_t processes = 1;
  std::string pid_path;  // absolute
  std::string log_path;  // absolute: php-fpm's error_log (the pool's FIFO)
};

// The text of php-fpm.conf. Every value is a double-quoted INI string, so values holding
// what INI quoting cannot carry (quote, backslash, '$', control characters) are refused,
// as are a pool named "global" (php-fpm's own section) and 0 processes.
common::Result<std::string> renderFpmConfig(const FpmConfig& config);

// Writes `text` to `path` atomically (a temp file renamed over it), mode 0640.
common::Status writeFileAtomically(const std::string& path, const std::string& text);

}  // namespace scalws::controller
