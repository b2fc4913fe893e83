// PoolHandlers: the controller's answers to `scalwsctl pool ...`, the pool.* rows
// of ipc/ops.cpp; ControlHandlers hands these ops over. Like every control handler, each
// validates all it can before it changes anything, so a refused operation leaves the DB as
// it was (a managed pool is only stored once its php-fpm runs).
//
// Args and results (JSON objects; times are Unix ms):
//   pool.list     {} -> {pools:[POOL]}
//   pool.show     {name} -> POOL
//   pool.add      {name, address, max_conns?}                       an external pool
//                 {name, managed:true, user, processes, php_fpm?}   a managed one
//                 -> POOL. address "unix:/abs/path" or "tcp:host:port" (literal host or
//                 localhost); max_conns 1..65535 (absent: unknown, one connection per
//                 request); user must exist and not be root; processes 1..1024 (its
//                 max_conns); php_fpm one of the binaries the controller runs (its
//                 --php-fpm, default /usr/sbin/php-fpm8.2, or an --allow-php-fpm; any
//                 other is permission_denied: the master runs as root). A managed pool listens on
//                 unix:<pool dir>/NAME.sock and the reply comes once php-fpm accepts there.
//   pool.remove   {name} -> {} (refused while assigned, and while a running instance's
//                 workers still use it — released but not reloaded yet; a managed pool's
//                 php-fpm is stopped)
//   pool.assign   {name, instance, as?} -> POOL + {replaced}: binds the pool to the name
//                 `as` (default: its own name) that the instance's php routes use
//                 (pool_binding.h); the pool that had that name there is released
//                 (`replaced`). Stored only: a running instance takes it on
//                 `instance reload` (or restart), like `instance set`.
//   pool.release  {name} -> POOL (unassigned; ok when it was not assigned)
// POOL = {name, kind:"external"|"managed", address, max_conns, instance, as, share,
//         user, processes, php_fpm, state, process:{state, pid, restarts, last_exit,
//         started_ms, adopted, config_path, log_path, socket_group}|null, created_ms,
//         updated_ms}. share: kept connections per serving loop of the instance (0 when
//         unassigned or max_conns unknown); state: "external" or the php-fpm's state.
// Errors: not_found (no such pool or instance), conflict (name taken), invalid_argument
// (bad args), failed (assigned elsewhere, still assigned, php-fpm did not start).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "controller/instances/instance_runtime.h"
#include "controller/pools/pool_runtime.h"
#include "controller/server/handler_support.h"
#include "controller/state/state_store.h"
#include "ipc/endpoint.h"
#include "ipc/handler_table.h"

namespace scalws::controller {

class PoolHandlers : private HandlerTypes {
 public:
  // `pools` may be null (no managed pools: their ops fail).
  PoolHandlers(state::StateStore& store, InstanceRuntime& instances, PoolRuntime* pools)
      : store_(store), instances_(instances), pools_(pools) {}

  // Registers a handler for every pool.* op on a scalwsctl connection.
  common::Status registerOn(ipc::Endpoint& endpoint);

  // POOL for `pool` as stored.
  ipc::Json describe(const state::PoolRecord& pool);

  // pool.list's reply, for ControlHandlers::read.
  common::Result<ipc::Json> listPools() { return list(ipc::Json::object()); }

 private:
  Reply list(const ipc::Json& args);
  Reply show(const ipc::Json& args);
  void add(In& in, Out out);
  void remove(In& in, Out out);
  Reply assign(const ipc::Json& args);
  Reply release(const ipc::Json& args);
  // The pool args["name"] names, as stored.
  common::Result<state::PoolRecord> namedPool(const ipc::Json& args);
  // The record of `pool add` args, checked (not stored).
  common::Result<state::PoolRecord> newPool(const ipc::Json& args);
  // Ok when nothing uses `pool`: no instance has it assigned, no running worker has it.
  common::Status checkRemovable(const state::PoolRecord& pool);

  state::StateStore& store_;
  InstanceRuntime& instances_;
  PoolRuntime* pools_;

  static const ipc::OpHandler<PoolHandlers> kHandlers[];
};

}  // namespace scalws::controller
