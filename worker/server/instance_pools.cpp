#include "worker/server/instance_pools.h"

#include <algorithm>

#include "common/config/php_pool_address.h"
#include "sandbox/landlock_abi.h"
#include "worker/server/missing_grants.h"

namespace scalws::worker {

using common::Status;
using common::config::PhpAction;
using common::config::PhpPoolConfig;
using common::config::SiteConfig;
using common::config::UpstreamServerConfig;

Status applyPhpPoolGrants(SiteConfig& site, const std::vector<ipc::PhpPoolGrant>& grants) {
  std::vector<PhpPoolConfig> pools;
  for (const ipc::PhpPoolGrant& grant : grants) {
    PhpPoolConfig pool;
    pool.name = grant.name;
    // A tuning table of the same name keeps its timeouts and queue.
    for (const PhpPoolConfig& tuned : site.php_pools) {
      if (tuned.name == grant.name) pool = tuned;
    }
    Status address = common::config::parsePhpPoolAddress(grant.address, pool);
    if (!address.ok()) {
      return common::invalidArgument("PHP pool " + grant.name + ": " + address.message());
    }
    pool.max_conns.reset();
    if (grant.max_conns > 0) pool.max_conns = grant.max_conns;
    pools.push_back(std::move(pool));
  }
  MissingGrants missing;
  for (const auto& route : site.routes) {
    const auto* php = std::get_if<PhpAction>(&route.action);
    if (php == nullptr) continue;
    bool granted = std::any_of(pools.begin(), pools.end(),
                               [&](const PhpPoolConfig& p) { return p.name == php->pool; });
    if (!granted) missing.add(php->where, "route.php.pool", "PHP pool", php->pool);
  }
  if (!missing.empty()) return missing.status();
  site.php_pools = std::move(pools);
  return Status();
}

std::map<std::string, uint32_t> phpPoolShares(const std::vector<ipc::PhpPoolGrant>& grants) {
  std::map<std::string, uint32_t> out;
  for (const ipc::PhpPoolGrant& g : grants) {
    if (g.max_conns > 0 && g.share > 0) out[g.name] = g.share;
  }
  return out;
}

ConnectAllowance connectAllowanceOf(const sandbox::SandboxReport& report,
                                    const SiteConfig& start_site) {
  ConnectAllowance a;
  if (report.seccomp.enforced) {
    // The policy allowed socket(AF_UNIX) only when a pool of the start config needed it
    // (worker_sandbox.cpp).
    a.unix_sockets =
        std::any_of(start_site.php_pools.begin(), start_site.php_pools.end(),
                    [](const PhpPoolConfig& p) { return p.kind == PhpPoolConfig::Kind::kUnix; });
    for (const auto& upstream : start_site.upstreams) {
      for (const auto& server : upstream.servers) {
        a.unix_sockets = a.unix_sockets || server.kind == UpstreamServerConfig::Kind::kUnix;
      }
    }
  }
  if (report.landlock.enforced &&
      (report.landlock.handledNet & sandbox::landlock_abi::kNetConnectTcp) != 0) {
    a.any_tcp_port = false;
    a.tcp_ports = report.landlock.tcpConnectPorts;
  }
  return a;
}

bool ConnectAllowance::allows(bool unix_socket, uint16_t port) const {
  if (unix_socket) return unix_sockets;
  return any_tcp_port || std::find(tcp_ports.begin(), tcp_ports.end(), port) != tcp_ports.end();
}

Status poolsFitSandbox(const ConnectAllowance& allowance, const SiteConfig& next) {
  for (const PhpPoolConfig& pool : next.php_pools) {
    if (!allowance.allows(pool.kind == PhpPoolConfig::Kind::kUnix, pool.port)) {
      return Status(common::StatusCode::kFailedPrecondition,
                    "PHP pool " + pool.name + " at " + pool.address +
                        " is outside the sandbox this worker started with; restart the "
                        "instance to apply it");
    }
  }
  for (const auto& upstream : next.upstreams) {
    for (const auto& server : upstream.servers) {
      if (!allowance.allows(server.kind == UpstreamServerConfig::Kind::kUnix, server.port)) {
        return Status(common::StatusCode::kFailedPrecondition,
                      "upstream " + upstream.name + " server " + server.address +
                          " is outside the sandbox this worker started with; restart the "
                          "instance to apply it");
      }
    }
  }
  return Status();
}

}  // namespace scalws::worker
