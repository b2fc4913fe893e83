// The PHP pools the controller gives an instance's worker: the `php_pools` field of the
// `config` and `reload` messages (and of a re-attaching worker's hello).
//
//   "php_pools": [{"name": "main", "address": "unix:/run/scalws/php/shop.sock",
//                  "max_conns": 8, "share": 4}, ...]
//
// `name` is what the instance's php routes call the pool (the name it is assigned under),
// `address` where it listens, `max_conns` its PHP process count (0: unknown, then the
// worker opens one connection per request) and `share` how many kept connections each
// serving loop of the worker may hold (max_conns divided across every loop of every
// process of the instance; 0 when max_conns is 0). Absent field: no pools.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ipc/message.h"

namespace scalws::ipc {

struct PhpPoolGrant {
  std::string name;
  std::string address;
  uint32_t max_conns = 0;
  uint32_t share = 0;

  friend bool operator==(const PhpPoolGrant&, const PhpPoolGrant&) = default;
};

Json phpPoolGrantsJson(const std::vector<PhpPoolGrant>& grants);

// Reads args["php_pools"]; absent is an empty list. Checks shapes only (names unique,
// strings non-empty, share 0 exactly when max_conns is 0); the worker's loader judges the
// address itself.
common::Result<std::vector<PhpPoolGrant>> parsePhpPoolGrants(const Json& args);

}  // namespace scalws::ipc
