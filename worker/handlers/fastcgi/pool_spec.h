// A PHP pool as one loop uses it: the address resolved to a sockaddr at config load (no
// name lookups on the request path) and this loop's share of the pool's connections.
//
// A plain value the config snapshot owns. Standalone, it is derived from [php_pool.NAME];
// under the controller the same value can be filled from what the controller hands over
// IPC (address and share), so nothing below the snapshot knows where it came from.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::worker::fastcgi {

struct PoolSpec {
  std::string name;
  std::string address_text;  // as configured, for logs
  sockaddr_storage address{};
  socklen_t address_len = 0;
  // With a known max_conns: connections are kept (FCGI_KEEP_CONN) and a loop holds at most
  // `share` of them. Without: one connection per request, closed by PHP-FPM after it.
  bool keep_conn = false;
  uint32_t share = 0;
  uint64_t timeout_ms = 60'000;
  uint64_t queue_timeout_ms = 5'000;
  uint32_t queue_limit = 256;

  // Same socket address (so kept connections to it stay valid).
  bool sameAddress(const PoolSpec& other) const;
};

// A loop's share of `max_conns` when `loops` loops (over all worker processes) share the
// pool: floor(max_conns / loops), so the loops together never exceed max_conns; at least 1,
// so a pool smaller than the loop count still serves (then the total may exceed max_conns,
// which resolvePoolSpec() warns about).
uint32_t poolShare(uint32_t max_conns, uint32_t loops);

// `loops`: the site's serving loops in total (standalone: [server] workers — one loop per
// process in "multi", one process of N loops in "single").
common::Result<PoolSpec> resolvePoolSpec(const common::config::PhpPoolConfig& config,
                                         uint32_t loops);

}  // namespace scalws::worker::fastcgi
