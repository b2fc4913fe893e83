#include "worker/handlers/cache/cache_status.h"

#include <algorithm>
#include <charconv>
#include <cstring>

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
    std::memcpy(out + n, text.data(), take);
    n += take;
  };
  put("scalws");
  if (s.hit) put("; hit");
  if (std::string_view fwd = forwardName(s.fwd); !fwd.empty()) {
    put("; fwd=");
    put(fwd);
  }
  // to_chars, not snprintf: a hit renders this on every answer.
  char number[24];
  auto putNumber = [&](long long value) {
    std::to_chars_result r = std::to_chars(number, number + sizeof(number), value);
    put(std::string_view(number, static_cast<size_t>(r.ptr - number)));
  };
  if (s.fwd_status != 0) {
    put("; fwd-status=");
    putNumber(s.fwd_status);
  }
  if (s.ttl) {
    put("; ttl=");
    putNumber(*s.ttl);
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
