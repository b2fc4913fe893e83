// A route's `limit` (or the [site] one it inherits) as the dispatcher applies it: the
// rule for the site's limit table (common/limits/limit_table.h), built once per snapshot,
// and the check of one request, right after routing and before the route's auth (a
// password guesser is counted before any hash is computed).
//
// The client is the request's `key` header when the limit names one and the request has
// it, else its address (after PROXY protocol and [real_ip]: what `allow` and REMOTE_ADDR
// see). A refusal is a 429 with Retry-After, answered by the dispatcher through the
// route's response rules; refusals are logged at most once a second per process, with how
// many there were meanwhile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/config/limit_config.h"
#include "common/config/site_config.h"
#include "common/limits/limit_table.h"
#include "worker/http/request.h"
#include "worker/limits/shared_limits.h"

namespace scalws::worker::limits {

struct RouteLimit {
  common::limits::LimitRule rule;
  std::string header;  // lower-case; "" = the client's address
  common::config::SourceLocation where;
};

// `config` applied as the limit `scope` names ("site", or the route's match): a reload
// that keeps the scope and the values keeps the clients' counts (the same id).
RouteLimit makeRouteLimit(const common::config::LimitConfig& config,
                          const common::config::RouteConfig* route);

// What to do with one request.
struct LimitVerdict {
  uint16_t status = 0;         // 0: go on; 429: refused
  uint32_t retry_after_s = 0;  // with 429
  // Admitted with a connections bound: what the stream releases when the request ends.
  uint32_t slot = 0;
  uint64_t key = 0;
};
LimitVerdict checkLimit(const RouteLimit& limit, SharedLimits& table, const Request& r,
                        uint64_t now_ns) noexcept;

}  // namespace scalws::worker::limits
