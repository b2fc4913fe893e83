#include "worker/handlers/cache/cache_control.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker::cache {
namespace {

CacheControl parse(std::string_view value) {
  CacheControl cc;
  parseCacheControlInto(value, cc);
  return cc;
}

TEST(CacheControl, ResponseDirectives) {
  CacheControl cc = parse("public, max-age=60, s-maxage=120, must-revalidate");
  EXPECT_TRUE(cc.is_public);
  EXPECT_EQ(cc.max_age, 60u);
  EXPECT_EQ(cc.s_maxage, 120u);
  EXPECT_TRUE(cc.must_revalidate);
  EXPECT_FALSE(cc.no_store);
  EXPECT_TRUE(cc.present);
  cc = parse("No-Store, PRIVATE, proxy-revalidate, no-cache");
  EXPECT_TRUE(cc.no_store);
  EXPECT_TRUE(cc.is_private);
  EXPECT_TRUE(cc.proxy_revalidate);
  EXPECT_TRUE(cc.no_cache);
  cc = parse("max-age=10, stale-while-revalidate=30, stale-if-error=600");
  EXPECT_EQ(cc.stale_while_revalidate, 30u);
  EXPECT_EQ(cc.stale_if_error, 600u);
}

TEST(CacheControl, QualifiedFormsKeepTheirFields) {
  CacheControl cc = parse("private=\"Set-Cookie, X-User\", no-cache=\"X-Debug\", max-age=5");
  EXPECT_FALSE(cc.is_private);
  EXPECT_EQ(cc.private_fields, "Set-Cookie, X-User");
  EXPECT_FALSE(cc.no_cache);
  EXPECT_EQ(cc.no_cache_fields, "X-Debug");
  EXPECT_EQ(cc.max_age, 5u);  // the comma inside the quotes did not end the list
  EXPECT_TRUE(fieldListNames(cc.private_fields, "x-user"));
  EXPECT_FALSE(fieldListNames(cc.private_fields, "x-use"));
}

TEST(CacheControl, BadValuesErrTowardsNotReusing) {
  EXPECT_EQ(parse("max-age=abc").max_age, 0u);  // invalid: stale
  EXPECT_EQ(parse("max-age").max_age, 0u);      // no value: stale
  EXPECT_EQ(parse("s-maxage=-5").s_maxage, 0u);
  EXPECT_EQ(parse("max-age=\"30\"").max_age, 30u);  // quoted form accepted
  EXPECT_EQ(parse("max-age=99999999999999999999").max_age, kMaxDeltaSeconds);  // saturates
  EXPECT_EQ(parse("max-age=10, max-age=20").max_age, 10u);  // the first one counts
  EXPECT_EQ(parse("stale-while-revalidate=x").stale_while_revalidate, 0u);
  EXPECT_EQ(parse("min-fresh=x").min_fresh, kMaxDeltaSeconds);
}

TEST(CacheControl, RequestDirectives) {
  CacheControl cc = parse("max-stale, only-if-cached, min-fresh=5");
  EXPECT_EQ(cc.max_stale, kMaxDeltaSeconds);
  EXPECT_TRUE(cc.only_if_cached);
  EXPECT_EQ(cc.min_fresh, 5u);
  EXPECT_EQ(parse("max-stale=7").max_stale, 7u);
}

TEST(CacheControl, SeveralLinesAreOneList) {
  std::vector<HeaderField> headers = {
      {"Cache-Control", "public"}, {"Content-Type", "text/plain"}, {"cache-control", "max-age=9"}};
  CacheControl cc = parseCacheControl(headers);
  EXPECT_TRUE(cc.is_public);
  EXPECT_EQ(cc.max_age, 9u);
  EXPECT_FALSE(parseCacheControl(std::vector<HeaderField>{}).present);
}

TEST(CacheControl, EmptyElementsAndUnknownExtensionsIgnored) {
  CacheControl cc = parse(" , ,community=\"UCI\", max-age=3,, ");
  EXPECT_EQ(cc.max_age, 3u);
  EXPECT_FALSE(cc.no_cache);
}

}  // namespace
}  // namespace scalws::worker::cache
