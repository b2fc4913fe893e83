// How an instance's php routes find the controller's PHP pools.
//
// An instance config names pools only in its routes: php = { pool = "main", ... }. Under
// the controller its [php_pool.NAME] tables are optional and may only tune the worker's
// side (timeout, queue_timeout, queue; config_loader.h php_pools_from_controller): where a
// pool listens and how many connections it takes are the controller's. `scalwsctl pool
// assign POOL INSTANCE [--as NAME]` binds a registered pool to the name NAME (default: the
// pool's own name) for that instance; at start and at every reload the controller hands
// each worker one grant per bound pool (ipc/php_pool_grants.h): the name, the address,
// max_conns and the worker's share. A php route whose name is not bound refuses the start
// (or the reload) with a message naming the route and the command that fixes it.
//
// Share: a pool's max_conns is divided across every serving loop of the instance, which is
// its CPU count in both modes (multi: a process per CPU with one loop; single: one process
// with a loop per CPU): share = max(1, max_conns / loops), the rule of the worker's own
// poolShare() (worker/handlers/fastcgi/pool_spec.h), so the instance never holds more than
// max_conns kept connections when max_conns >= loops. max_conns 0 (unknown) gives share 0:
// one connection per request, none kept.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "controller/state/records.h"
#include "controller/state/state_store.h"
#include "ipc/php_pool_grants.h"

namespace scalws::controller {

uint32_t poolShareFor(uint32_t max_conns, uint32_t loops);

// The serving loops of an instance: its assigned CPUs (at least 1).
uint32_t instanceLoops(const state::InstanceRecord& instance);

// One grant per pool of `pools` assigned to `instance`, ordered by the name it is bound as.
std::vector<ipc::PhpPoolGrant> poolGrantsFor(const state::InstanceRecord& instance,
                                             const std::vector<state::PoolRecord>& pools);

// The pool names `site`'s php routes use, each once, in route order.
std::vector<std::string> phpPoolNames(const common::config::SiteConfig& site);

// Ok when every php route of `site` names a granted pool; else kFailedPrecondition naming
// each unbound name and how to bind it.
common::Status checkPoolNames(const std::string& instance, const common::config::SiteConfig& site,
                              const std::vector<ipc::PhpPoolGrant>& grants);

// The grants of `instance` as the store holds them now, checked against `site`.
common::Result<std::vector<ipc::PhpPoolGrant>> instancePoolGrants(
    state::StateStore& store, const state::InstanceRecord& instance,
    const common::config::SiteConfig& site);

}  // namespace scalws::controller
