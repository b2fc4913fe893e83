#include "controller/pools/pool_binding.h"

#include <algorithm>

#include "controller/route_bindings.h"

namespace scalws::controller {

using common::Result;
using common::Status;

namespace {

const std::string* poolOf(const common::config::RouteConfig& route) {
  const auto* php = std::get_if<common::config::PhpAction>(&route.action);
  return php == nullptr ? nullptr : &php->pool;
}

}  // namespace

uint32_t poolShareFor(uint32_t max_conns, uint32_t loops) {
  if (max_conns == 0) return 0;
  return std::max<uint32_t>(1, max_conns / std::max<uint32_t>(1, loops));
}

uint32_t instanceLoops(const state::InstanceRecord& instance) {
  return static_cast<uint32_t>(std::max<size_t>(1, instance.assigned_cpus.size()));
}

std::vector<ipc::PhpPoolGrant> poolGrantsFor(const state::InstanceRecord& instance,
                                             const std::vector<state::PoolRecord>& pools) {
  std::vector<ipc::PhpPoolGrant> out;
  uint32_t loops = instanceLoops(instance);
  for (const state::PoolRecord& p : pools) {
    if (!p.instance || *p.instance != instance.name) continue;
    out.push_back(ipc::PhpPoolGrant{p.assigned_as.empty() ? p.name : p.assigned_as, p.address,
                                    p.max_conns, poolShareFor(p.max_conns, loops)});
  }
  sortByName(out);
  return out;
}

std::vector<std::string> phpPoolNames(const common::config::SiteConfig& site) {
  return routeNames(site, poolOf);
}

Status checkPoolNames(const std::string& instance, const common::config::SiteConfig& site,
                      const std::vector<ipc::PhpPoolGrant>& grants) {
  return checkRouteNames(instance, site, poolOf, grantNames(grants),
                         {"pool", "scalwsctl pool assign POOL",
                          "its php routes use a PHP pool no pool is assigned as"});
}

Result<std::vector<ipc::PhpPoolGrant>> instancePoolGrants(state::StateStore& store,
                                                          const state::InstanceRecord& instance,
                                                          const common::config::SiteConfig& site) {
  Result<std::vector<state::PoolRecord>> pools = store.listPools();
  if (!pools.ok()) return pools.status();
  std::vector<ipc::PhpPoolGrant> grants = poolGrantsFor(instance, *pools);
  SCALWS_RETURN_IF_ERROR(checkPoolNames(instance.name, site, grants));
  return grants;
}

}  // namespace scalws::controller
