// The Cache-Status response field (RFC 9211) a cached route adds to every answer: how the
// cache handled the request, as one list member named "scalws".
//
//   scalws; hit; ttl=118                                  fresh, from the cache
//   scalws; hit; ttl=-3; detail=stale-while-revalidate    stale, revalidated behind it
//   scalws; fwd=uri-miss; stored                          not in the cache; stored now
//   scalws; fwd=vary-miss; collapsed; stored               waited for another request's fill
//   scalws; fwd=stale; fwd-status=304; ttl=60             revalidated, the 304 refreshed it
//   scalws; fwd=stale; fwd-status=502; ttl=-40; detail=stale-if-error
//   scalws; fwd=method                                     a method the cache never stores
//   scalws; fwd=request                                    the request asked to bypass it
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace scalws::worker::cache {

struct CacheStatus {
  enum class Forward { kNone, kBypass, kMethod, kUriMiss, kVaryMiss, kMiss, kRequest, kStale };
  bool hit = false;
  Forward fwd = Forward::kNone;
  uint16_t fwd_status = 0;     // 0: not sent
  std::optional<int64_t> ttl;  // seconds of freshness left (negative: stale)
  bool stored = false;
  bool collapsed = false;
  std::string_view detail;  // a token ("stale-if-error"); empty: none
};

// Room enough for any rendering.
inline constexpr size_t kCacheStatusMax = 160;
// Renders into `out` (kCacheStatusMax bytes); returns the length.
size_t renderCacheStatus(const CacheStatus& status, char* out);

}  // namespace scalws::worker::cache
