#include "worker/handlers/cache/cache_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker::cache {
namespace {

using common::config::CacheConfig;
using common::config::CacheDefaultTtl;

// Sun, 06 Nov 1994 08:49:37 GMT
constexpr int64_t kDate = 784111777;
constexpr int64_t kNow = kDate * 1000;
constexpr std::string_view kDateText = "Sun, 06 Nov 1994 08:49:37 GMT";

ResponseTiming timing() {
  return ResponseTiming{kNow - 200, kNow};
}

StorePlan plan(std::vector<HeaderField> headers, uint16_t status = 200, RequestFacts request = {},
               const CacheConfig& config = {}) {
  return planStore(config, request, status, headers, timing());
}

TEST(CachePolicy, StoresExplicitFreshness) {
  StorePlan p = plan({{"Cache-Control", "max-age=60"}});
  ASSERT_TRUE(p.store);
  EXPECT_EQ(p.freshness.lifetime_ms, 60'000u);
  EXPECT_FALSE(p.freshness.must_revalidate);
  // s-maxage wins over max-age in a shared cache, and means proxy-revalidate.
  p = plan({{"Cache-Control", "max-age=60, s-maxage=5"}});
  EXPECT_EQ(p.freshness.lifetime_ms, 5'000u);
  EXPECT_TRUE(p.freshness.must_revalidate);
  // Expires - Date.
  p = plan({{"Date", kDateText}, {"Expires", "Sun, 06 Nov 1994 08:50:37 GMT"}});
  ASSERT_TRUE(p.store);
  EXPECT_EQ(p.freshness.lifetime_ms, 60'000u);
  // max-age beats Expires.
  p = plan({{"Expires", "Sun, 06 Nov 1994 08:50:37 GMT"}, {"Cache-Control", "max-age=1"}});
  EXPECT_EQ(p.freshness.lifetime_ms, 1'000u);
}

TEST(CachePolicy, InvalidExpiresIsAlreadyStale) {
  StorePlan p = plan({{"Date", kDateText}, {"Expires", "0"}});
  ASSERT_TRUE(p.store);  // stored, but stale from the start
  EXPECT_EQ(p.freshness.lifetime_ms, 0u);
}

TEST(CachePolicy, DefaultTtlOnlyWhenTheUpstreamSaysNothing) {
  CacheConfig config;
  config.default_ttl = {CacheDefaultTtl{200, 600'000}, CacheDefaultTtl{404, 60'000}};
  StorePlan p = plan({}, 200, {}, config);
  ASSERT_TRUE(p.store);
  EXPECT_EQ(p.freshness.lifetime_ms, 600'000u);
  EXPECT_EQ(plan({}, 404, {}, config).freshness.lifetime_ms, 60'000u);
  EXPECT_FALSE(plan({}, 500, {}, config).store);
  EXPECT_EQ(plan({}, 500, {}, config).why_not, "no-freshness");
  // The upstream's own word wins.
  EXPECT_EQ(plan({{"Cache-Control", "max-age=3"}}, 200, {}, config).freshness.lifetime_ms, 3'000u);
  // Heuristics are off: nothing configured, nothing said, not stored.
  EXPECT_EQ(plan({{"Last-Modified", kDateText}}).why_not, "no-freshness");
}

TEST(CachePolicy, RefusesWhatMayNotBeStored) {
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60, no-store"}}).why_not, "no-store");
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60, private"}}).why_not, "private");
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60"}, {"Vary", "Accept, *"}}).why_not, "vary");
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60"}}, 206).why_not, "status");
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60"}}, 304).why_not, "status");
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60"}}, 101).why_not, "status");
  RequestFacts head;
  head.method = Method::kHead;
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60"}}, 200, head).why_not, "method");
  RequestFacts post;
  post.method = Method::kPost;
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60"}}, 200, post).why_not, "method");
  RequestFacts no_store;
  no_store.cache_control.no_store = true;
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60"}}, 200, no_store).why_not, "no-store");
}

TEST(CachePolicy, AuthorizationNeedsTheResponsesPermission) {
  RequestFacts auth;
  auth.authorization = true;
  EXPECT_EQ(plan({{"Cache-Control", "max-age=60"}}, 200, auth).why_not, "authorization");
  EXPECT_TRUE(plan({{"Cache-Control", "max-age=60, public"}}, 200, auth).store);
  EXPECT_TRUE(plan({{"Cache-Control", "s-maxage=60"}}, 200, auth).store);
  EXPECT_TRUE(plan({{"Cache-Control", "max-age=60, must-revalidate"}}, 200, auth).store);
}

TEST(CachePolicy, SetCookieFollowsTheConfig) {
  std::vector<HeaderField> h = {{"Cache-Control", "max-age=60"}, {"Set-Cookie", "a=b"}};
  CacheConfig config;
  EXPECT_EQ(plan(h, 200, {}, config).why_not, "set-cookie");
  config.set_cookie = CacheConfig::SetCookie::kStrip;
  StorePlan p = plan(h, 200, {}, config);
  EXPECT_TRUE(p.store);
  EXPECT_TRUE(p.strip_set_cookie);
  config.set_cookie = CacheConfig::SetCookie::kStore;
  p = plan(h, 200, {}, config);
  EXPECT_TRUE(p.store);
  EXPECT_FALSE(p.strip_set_cookie);
}

TEST(CachePolicy, QualifiedPrivateAndNoCacheStoreWithoutTheirFields) {
  StorePlan p = plan({{"Cache-Control", "max-age=60, private=\"X-User\", no-cache=\"X-Dbg\""}});
  ASSERT_TRUE(p.store);
  EXPECT_EQ(p.private_fields, "X-User");
  EXPECT_EQ(p.no_cache_fields, "X-Dbg");
  EXPECT_FALSE(p.freshness.no_cache);
}

TEST(CachePolicy, AgeCalculation) {
  // RFC 9111 §4.2.3: the larger of the apparent age and Age + the response delay.
  ResponseTiming t{kNow - 2'000, kNow};
  std::vector<HeaderField> h = {{"Date", kDateText}, {"Age", "10"}};
  EXPECT_EQ(correctedInitialAgeMs(h, t), 12'000u);
  // A Date 30 s in the past: apparent age 30 s.
  h = {{"Date", "Sun, 06 Nov 1994 08:49:07 GMT"}};
  EXPECT_EQ(correctedInitialAgeMs(h, t), 30'000u);
  // Invalid Age ignored; a list counts its first member.
  h = {{"Date", kDateText}, {"Age", "ten"}};
  EXPECT_EQ(correctedInitialAgeMs(h, t), 2'000u);
  h = {{"Date", kDateText}, {"Age", "5, 7"}};
  EXPECT_EQ(correctedInitialAgeMs(h, t), 7'000u);
  Freshness f;
  f.response_time_ms = kNow;
  f.corrected_initial_age_ms = 12'000;
  EXPECT_EQ(currentAgeMs(f, kNow + 3'000), 15'000u);
  EXPECT_EQ(currentAgeMs(f, kNow - 3'000), 12'000u);  // a clock going back adds nothing
}

Freshness fresh(uint64_t lifetime_ms, uint64_t age_ms) {
  Freshness f;
  f.response_time_ms = kNow;
  f.lifetime_ms = lifetime_ms;
  f.corrected_initial_age_ms = age_ms;
  return f;
}

TEST(CachePolicy, ReuseOfFreshAndStaleEntries) {
  CacheControl none;
  EXPECT_EQ(decideReuse(fresh(60'000, 0), none, kNow + 59'000), Reuse::kFresh);
  EXPECT_EQ(decideReuse(fresh(60'000, 0), none, kNow + 60'000), Reuse::kRevalidate);
  Freshness no_cache = fresh(60'000, 0);
  no_cache.no_cache = true;
  EXPECT_EQ(decideReuse(no_cache, none, kNow), Reuse::kRevalidate);
  Freshness swr = fresh(10'000, 0);
  swr.stale_while_revalidate_ms = 30'000;
  EXPECT_EQ(decideReuse(swr, none, kNow + 20'000), Reuse::kStaleWhileRevalidate);
  EXPECT_EQ(decideReuse(swr, none, kNow + 41'000), Reuse::kRevalidate);
  swr.must_revalidate = true;
  EXPECT_EQ(decideReuse(swr, none, kNow + 20'000), Reuse::kRevalidate);
}

TEST(CachePolicy, RequestDirectivesNarrowReuse) {
  CacheControl req;
  req.no_cache = true;
  EXPECT_EQ(decideReuse(fresh(60'000, 0), req, kNow), Reuse::kRevalidate);
  req = CacheControl{};
  req.max_age = 10;
  EXPECT_EQ(decideReuse(fresh(60'000, 0), req, kNow + 5'000), Reuse::kFresh);
  EXPECT_EQ(decideReuse(fresh(60'000, 0), req, kNow + 11'000), Reuse::kRevalidate);
  req = CacheControl{};
  req.min_fresh = 30;
  EXPECT_EQ(decideReuse(fresh(60'000, 0), req, kNow + 20'000), Reuse::kFresh);
  EXPECT_EQ(decideReuse(fresh(60'000, 0), req, kNow + 40'000), Reuse::kRevalidate);
  req = CacheControl{};
  req.max_stale = 100;
  EXPECT_EQ(decideReuse(fresh(60'000, 0), req, kNow + 120'000), Reuse::kFresh);
  Freshness strict = fresh(60'000, 0);
  strict.must_revalidate = true;
  EXPECT_EQ(decideReuse(strict, req, kNow + 120'000), Reuse::kRevalidate);
}

TEST(CachePolicy, StaleIfError) {
  CacheControl none;
  Freshness f = fresh(10'000, 0);
  EXPECT_FALSE(staleIfErrorAllows(f, none, 0, kNow + 20'000));       // nothing allows it
  EXPECT_TRUE(staleIfErrorAllows(f, none, 60'000, kNow + 20'000));   // the config does
  EXPECT_FALSE(staleIfErrorAllows(f, none, 60'000, kNow + 80'000));  // too stale
  f.stale_if_error_ms = 120'000;
  EXPECT_TRUE(staleIfErrorAllows(f, none, 0, kNow + 80'000));  // the response does
  CacheControl req;
  req.stale_if_error = 5;
  EXPECT_FALSE(staleIfErrorAllows(f, req, 0, kNow + 80'000));  // the client's limit
  f.must_revalidate = true;
  EXPECT_FALSE(staleIfErrorAllows(f, none, 600'000, kNow + 20'000));
  EXPECT_TRUE(isErrorStatus(502));
  EXPECT_FALSE(isErrorStatus(404));
}

TEST(CachePolicy, RefreshFromA304) {
  std::vector<HeaderField> merged = {{"Date", kDateText}, {"Cache-Control", "max-age=90"}};
  Freshness f = refreshedFreshness(CacheConfig{}, 200, merged, timing());
  EXPECT_EQ(f.lifetime_ms, 90'000u);
  EXPECT_EQ(f.response_time_ms, kNow);
}

}  // namespace
}  // namespace scalws::worker::cache
