// The PHP pools of an instance-mode worker: what the controller grants (ipc/php_pool_grants.h)
// merged into the site's config, and whether a new set of pools is still reachable from
// inside the sandbox the worker entered at start.
//
// Under the controller an instance's config names pools only in its php routes (and may
// tune them in [php_pool.NAME] tables without address or max_conns; config_loader.h
// php_pools_from_controller). The controller sends, in `config` and `reload`, one grant per
// pool assigned to the instance: name, address, max_conns and this worker's per-loop share.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "ipc/php_pool_grants.h"
#include "sandbox/sandbox_report.h"

namespace scalws::worker {

// Gives every granted pool its address and max_conns (creating its [php_pool] entry when
// the config has none) and drops the entries nobody granted. Every php route must then name
// a granted pool; otherwise an error names each route and pool that is missing.
common::Status applyPhpPoolGrants(common::config::SiteConfig& site,
                                  const std::vector<ipc::PhpPoolGrant>& grants);

// name -> per-loop share, for ConfigSnapshot::build (only pools with a known max_conns).
std::map<std::string, uint32_t> phpPoolShares(const std::vector<ipc::PhpPoolGrant>& grants);

// Where the worker may still connect, as fixed when it entered its sandbox: seccomp
// refuses socket(AF_UNIX) unless the start config had a unix pool or upstream, and Landlock
// (ABI >= 4) refuses TCP connects except to the ports of the start config. Neither can be widened
// from inside.
struct ConnectAllowance {
  bool unix_sockets = true;
  bool any_tcp_port = true;
  std::vector<uint16_t> tcp_ports;  // when !any_tcp_port

  // Whether a backend (a unix socket, or TCP `port`) is reachable under this allowance.
  bool allows(bool unix_socket, uint16_t port) const;
};
ConnectAllowance connectAllowanceOf(const sandbox::SandboxReport& report,
                                    const common::config::SiteConfig& start_site);

// Ok when every PHP pool and upstream server of `next` is reachable under `allowance`; else
// why not (a reload to it is refused: the instance must be restarted to get a sandbox that
// fits).
common::Status poolsFitSandbox(const ConnectAllowance& allowance,
                               const common::config::SiteConfig& next);

}  // namespace scalws::worker
