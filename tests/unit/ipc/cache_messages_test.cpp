#include "ipc/cache_messages.h"

#include <gtest/gtest.h>

namespace scalws::ipc {
namespace {

TEST(CacheMessagesTest, APurgeSaysWhatToDropAndTheUrlIsKeyedAsTheCacheKeysIt) {
  CachePurge p;
  p.instance = "shop";
  p.cache = "pages";
  p.scope = CachePurge::Scope::kPrefix;
  p.target = "HTTPS://ignored";  // the scheme must be lower case, as requests key it
  EXPECT_FALSE(CachePurge::decode(p.encode()).ok());
  p.target = "https://WWW.Shop.example:443/Blog/";
  auto back = CachePurge::decode(p.encode());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->instance, "shop");
  EXPECT_EQ(back->cache, "pages");
  EXPECT_EQ(back->scope, CachePurge::Scope::kPrefix);
  EXPECT_EQ(back->target, "https://www.shop.example/Blog/");  // the path keeps its case
  EXPECT_EQ(CachePurge::decode(Json{{"scope", "url"}, {"target", "http://a"}})->target, "http://a");

  auto all = CachePurge::decode(Json{{"scope", "all"}, {"target", "ignored"}});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->target, "");
  EXPECT_FALSE(all->encode().contains("target"));
  EXPECT_FALSE(all->encode().contains("name"));  // the worker's message names no instance

  for (const Json& bad :
       {Json{{"scope", "some"}}, Json{{"scope", "url"}}, Json{{"scope", "url"}, {"target", "/a"}},
        Json{{"scope", "url"}, {"target", "http://a/\x01"}},
        Json{{"scope", "url"}, {"target", "http://a/" + std::string(9000, 'x')}},
        Json{{"scope", "all"}, {"cache", "a/b"}}, Json{{"scope", "all"}, {"name", 7}}}) {
    EXPECT_FALSE(CachePurge::decode(bad).ok()) << bad.dump();
  }
}

TEST(CacheMessagesTest, ResultsAndReports) {
  CachePurgeResult r{3, 2};
  auto back = CachePurgeResult::decode(r.encode());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->memory_entries, 3u);
  EXPECT_EQ(back->disk_files, 2u);
  EXPECT_FALSE(CachePurgeResult::decode(Json{{"memory_entries", -1}, {"disk_files", 0}}).ok());

  Json args = {{"caches", cacheAreaReportsJson({{"pages", 4}, {"api.v2", 5}})}};
  auto reports = cacheAreaReportsFrom(args);
  ASSERT_TRUE(reports.ok());
  EXPECT_EQ(*reports, (std::vector<CacheAreaReport>{{"pages", 4}, {"api.v2", 5}}));
  EXPECT_TRUE(cacheAreaReportsFrom(Json::object())->empty());  // none
  Json too_many = {{"caches", Json::array()}};
  for (int i = 0; i < 66; ++i) too_many["caches"].push_back({{"name", "c"}, {"fd", 3}});
  EXPECT_FALSE(cacheAreaReportsFrom(too_many).ok());
  EXPECT_FALSE(cacheAreaReportsFrom(Json{{"caches", {{{"name", "c\n"}, {"fd", 3}}}}}).ok());
  // The limit table rides with them under the one name no cache can have.
  auto limits = cacheAreaReportsFrom(Json{{"caches", {{{"name", "@limits"}, {"fd", 6u}}}}});
  ASSERT_TRUE(limits.ok()) << limits.status().message();
  EXPECT_EQ(*limits, (std::vector<CacheAreaReport>{{std::string(kLimitAreaName), 6}}));
  EXPECT_FALSE(cacheAreaReportsFrom(Json{{"caches", {{{"name", "@other"}, {"fd", 6u}}}}}).ok());
  EXPECT_TRUE(isAreaName("pages"));
  EXPECT_TRUE(isAreaName("@limits"));
  EXPECT_FALSE(isAreaName("@limit"));
}

}  // namespace
}  // namespace scalws::ipc
