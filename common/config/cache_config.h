// The response cache's part of the config model: [cache.NAME] tables, which proxy routes
// name with `proxy = { cache = "NAME" }`.
//
// Plain values like the rest of site_config.h. A cache belongs to one site (one instance):
// every worker process of it shares the cache's memory and disk tiers, and nothing of it is
// visible to another site.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/config_types.h"

namespace scalws::common::config {

// One element of cache.key: what the primary cache key is made of, in order.
struct CacheKeyPart {
  enum class Kind { kScheme, kHost, kPath, kQuery, kMethod, kHeader, kCookie };
  Kind kind = Kind::kScheme;
  std::string name;  // kHeader: lower-case field name; kCookie: the cookie's name
};

// cache.default_ttl: how long a response with this status stays fresh when the upstream
// gave no freshness information at all (no max-age, s-maxage or Expires).
struct CacheDefaultTtl {
  uint16_t status = 200;
  Milliseconds ttl = 0;
};

// [cache.NAME]
struct CacheConfig {
  // What a response carrying Set-Cookie does to the cache: not stored ("bypass", the
  // default: a cookie is usually for one client), stored without the Set-Cookie field
  // ("strip"; the client that caused the fill still gets it), or stored with it ("store").
  enum class SetCookie { kBypass, kStrip, kStore };

  std::string name;
  Bytes memory = 64ull << 20;       // the memory tier: stored heads and bodies
  std::string disk;                 // absolute directory of the disk tier; "" none
  Bytes max_disk = 1ull << 30;      // bytes of entry files kept under `disk`
  Milliseconds inactive = 600'000;  // an entry unused this long is evicted
  std::vector<CacheKeyPart> key = {{CacheKeyPart::Kind::kScheme, {}},
                                   {CacheKeyPart::Kind::kHost, {}},
                                   {CacheKeyPart::Kind::kPath, {}},
                                   {CacheKeyPart::Kind::kQuery, {}}};
  std::vector<CacheDefaultTtl> default_ttl;  // by status, in file order; statuses unique
  Bytes max_entry = 1ull << 20;              // a response larger than this streams through uncached
  Milliseconds lock_timeout = 5'000;         // a miss waits this long for another one's fill
  Milliseconds stale_if_error = 0;           // a stale entry answers when the upstream fails
  bool cache_status_header = true;           // RFC 9211 Cache-Status on every cached route answer
  SetCookie set_cookie = SetCookie::kBypass;
  SourceLocation where;
};

// Letters, digits, '-', '_', '.'; 1 to 64 of them.
bool isCacheName(std::string_view name);
// Whether a cache made for `a` can serve `b` unchanged: the same name and the same memory
// and disk tiers (what a reload may keep; the other settings apply per request).
bool sameCacheStorage(const CacheConfig& a, const CacheConfig& b);

// route.cache_purge: a PURGE request removes the cached answers to its URL.
struct CachePurgeAction {
  std::string cache;  // a [cache.NAME] of this config
  SourceLocation where;
};

}  // namespace scalws::common::config
