#include "worker/handlers/cache/cache_status.h"

#include <gtest/gtest.h>

#include <string>

namespace scalws::worker::cache {
namespace {

std::string render(const CacheStatus& s) {
  char out[kCacheStatusMax];
  return std::string(out, renderCacheStatus(s, out));
}

TEST(CacheStatus, Renderings) {
  CacheStatus hit;
  hit.hit = true;
  hit.ttl = 118;
  EXPECT_EQ(render(hit), "scalws; hit; ttl=118");
  CacheStatus miss;
  miss.fwd = CacheStatus::Forward::kUriMiss;
  miss.stored = true;
  EXPECT_EQ(render(miss), "scalws; fwd=uri-miss; stored");
  CacheStatus stale;
  stale.fwd = CacheStatus::Forward::kStale;
  stale.fwd_status = 502;
  stale.ttl = -40;
  stale.detail = "stale-if-error";
  EXPECT_EQ(render(stale), "scalws; fwd=stale; fwd-status=502; ttl=-40; detail=stale-if-error");
  CacheStatus collapsed;
  collapsed.fwd = CacheStatus::Forward::kVaryMiss;
  collapsed.collapsed = true;
  EXPECT_EQ(render(collapsed), "scalws; fwd=vary-miss; collapsed");
  CacheStatus method;
  method.fwd = CacheStatus::Forward::kMethod;
  EXPECT_EQ(render(method), "scalws; fwd=method");
  CacheStatus all;
  all.hit = true;
  all.fwd = CacheStatus::Forward::kRequest;
  all.fwd_status = 599;
  all.ttl = INT64_MIN;
  all.stored = all.collapsed = true;
  all.detail = std::string_view("stale-while-revalidate-and-some-more-text-to-be-long");
  EXPECT_LE(render(all).size(), kCacheStatusMax);
}

}  // namespace
}  // namespace scalws::worker::cache
