#include "worker/handlers/cache/cache_status.h"

#include <cstdio>

namespace scalws::worker::cache {
namespace {

std::string_view forwardName(CacheStatus::Forward fwd) {
  switch (fwd) {
    case CacheStatus::Forward::kNone:
      return {};
    case CacheStatus::Forward::kBypass:
      return "bypass";
    case CacheStatus::Forward::kMethod:
      return "method";
    case CacheStatus::Forward::kUriMiss:
      return "uri-miss";
    case CacheStatus::Forward::kVaryMiss:
      return "vary-miss";
    case CacheStatus::Forward::kMiss:
      return "miss";
    case CacheStatus::Forward::kRequest:
      return "request";
    case CacheStatus::Forward::kStale:
      return "stale";
  }
  return {};
}

}  // namespace

size_t renderCacheStatus(const CacheStatus& s, char* out) {
  size_t n = 0;
  auto put = [&](std::string_view text) {
    size_t take = std::min(text.size(), kCacheStatusMax - n);
    for (size_t i = 0; i < take; ++i) out[n + i] = text[i];
    n += take;
  };
  put("scalws");
  if (s.hit) put("; hit");
  if (std::string_view fwd = forwardName(s.fwd); !fwd.empty()) {
    put("; fwd=");
    put(fwd);
  }
  char number[32];
  if (s.fwd_status != 0) {
    int len = std::snprintf(number, sizeof(number), "; fwd-status=%u", unsigned{s.fwd_status});
    put(std::string_view(number, static_cast<size_t>(len)));
  }
  if (s.ttl) {
    int len = std::snprintf(number, sizeof(number), "; ttl=%lld", static_cast<long long>(*s.ttl));
    put(std::string_view(number, static_cast<size_t>(len)));
  }
  if (s.stored) put("; stored");
  if (s.collapsed) put("; collapsed");
  if (!s.detail.empty()) {
    put("; detail=");
    put(s.detail);
  }
  return n;
}

}  // namespace scalws::worker::cache
