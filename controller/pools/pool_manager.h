// PoolManager: the controller's managed PHP pools, one PoolProcess (a php-fpm
// master) per managed pool of the state DB.
//
// - Controller start (startAll): every managed pool of the DB is adopted when its master
//   from a previous controller still runs (pid file + process title, pool_process.h), else
//   started; files of pools the DB no longer has (a controller that died half-way through a
//   `pool remove`) are cleaned up, their master stopped.
// - `pool add --managed` (startPool): starts php-fpm before the row is stored; the handler
//   stores it only once php-fpm accepts, so a pool that cannot start is never registered.
// - `pool remove` (removePool): stops php-fpm and removes its directory and socket.
// - `pool assign` / `pool release` / `instance remove` (assignmentsChanged): the socket's
//   group follows the assigned instance's user (pool_fpm_config.h has the permissions). A
//   release does not take it away: the instance's workers use the pool until their next
//   reload (a reassignment swaps pools without a failed request); the group changes when
//   the pool is assigned to another instance, and a controller that starts gives unassigned
//   pools their own user's group.
// - Controller exit: stopAll after the instances stopped (so their requests in flight
//   finish on PHP first), or leave() when the sites are left serving for the next
//   controller, which then adopts the masters.
#pragma once

#include <uv.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/pools/pool_fpm_config.h"
#include "controller/pools/pool_process.h"
#include "controller/pools/pool_runtime.h"
#include "controller/restart_policy.h"
#include "controller/state/state_store.h"

namespace scalws::controller {

struct PoolManagerOptions {
  std::string state_dir;   // pool files in <state_dir>/pools/NAME/
  std::string socket_dir;  // sockets: <socket_dir>/NAME.sock (--pool-dir)
  std::string php_fpm = kDefaultPhpFpm;
  std::vector<std::string> allowed_php_fpm;  // besides php_fpm (--allow-php-fpm)
  RestartLimits limits;
  uint64_t log_cap = kDefaultPoolLogCap;  // php-fpm.log's size before it rotates
};

class PoolManager final : public PoolRuntime {
 public:
  PoolManager(uv_loop_t* loop, state::StateStore& store, PoolManagerOptions options);
  ~PoolManager() override;  // lets go of every master (leave)

  // Adopts or starts every managed pool of the DB; `done` once each had its first attempt
  // (one that failed goes on retrying with backoff).
  void startAll(Done done);
  void stopAll(Done done);
  void leave();

  // PoolRuntime
  std::string managedAddress(const std::string& name) const override;
  std::string defaultPhpFpm() const override { return options_.php_fpm; }
  bool phpFpmAllowed(const std::string& path) const override;
  void startPool(const state::PoolRecord& pool, Done done) override;
  void removePool(const std::string& name, Done done) override;
  void assignmentsChanged() override;
  ipc::Json poolStatus(const std::string& name) const override;

  // Paths of a pool's files (pool_fpm_config.h), for tests and `pool show`.
  PoolPaths pathsFor(const state::PoolRecord& pool) const;

 private:
  struct Entry {
    state::PoolRecord record;
    std::string socket_group;
    std::unique_ptr<PoolProcess> process;
  };

  Entry& addEntry(const state::PoolRecord& pool);
  common::Status prepare(const std::string& name);
  // The group the socket of `pool` gets; `current` is the one it has now.
  common::Result<std::string> socketGroupFor(const state::PoolRecord& pool,
                                             const std::string& current);
  void applySocketOwnership(const Entry& entry);
  void cleanUpUnknown(const std::map<std::string, bool>& known);
  void discard(const std::string& name);

  uv_loop_t* loop_;
  state::StateStore& store_;
  PoolManagerOptions options_;
  std::map<std::string, Entry> pools_;
  std::map<std::string, std::unique_ptr<PoolProcess>> discarded_;  // freed on the next turn
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace scalws::controller
