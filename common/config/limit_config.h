// `limit` on a route or on [site]: how many requests one client may make (a rate with a
// burst, as nginx's limit_req) and have in flight at once (as limit_conn, counted per
// request, so HTTP/2 streams count). A route's own `limit` replaces the site's; a route
// without one has the site's. The state of every limit lives in one table per site
// ([site] limit_table bytes), shared by the site's worker processes (common/limits/).
#pragma once

#include <cstdint>
#include <string>

#include "common/config/config_types.h"

namespace scalws::common::config {

// limit = { rate = "10r/m", burst = 5, connections = 4, key = "x-api-key" }
struct LimitConfig {
  uint32_t rate = 0;         // requests per `per_seconds`; 0: no rate (connections only)
  uint32_t per_seconds = 1;  // 1 ("r/s") or 60 ("r/m")
  uint32_t burst = 0;        // requests allowed above the rate at once
  uint32_t connections = 0;  // requests in flight at once; 0: unbounded
  std::string key;           // a lower-case header name; "": the client's address
  SourceLocation where;

  friend bool operator==(const LimitConfig& a, const LimitConfig& b) {
    return a.rate == b.rate && a.per_seconds == b.per_seconds && a.burst == b.burst &&
           a.connections == b.connections && a.key == b.key;
  }
};

inline constexpr uint32_t kMaxLimitRate = 1000000;
inline constexpr uint32_t kMaxLimitBurst = 1000000;
inline constexpr uint32_t kMaxLimitConnections = 1000000;
// [site] limit_table: the bytes of the table (1 MiB holds 32,768 clients).
inline constexpr uint64_t kDefaultLimitTable = uint64_t{1} << 20;
inline constexpr uint64_t kMinLimitTable = uint64_t{64} << 10;
inline constexpr uint64_t kMaxLimitTable = uint64_t{1} << 30;

}  // namespace scalws::common::config
