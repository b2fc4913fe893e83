// [cache.NAME]: sizes, durations, the key, default TTLs, and every bad value refused with
// its position.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

CacheConfig cacheOf(const std::string& keys) {
  SiteConfig site = loadSnippet("[cache.pages]\n" + keys + "\n");
  EXPECT_EQ(site.caches.size(), 1u);
  return site.caches.empty() ? CacheConfig{} : site.caches[0];
}

TEST(CacheSection, Defaults) {
  CacheConfig cache = cacheOf("");
  EXPECT_EQ(cache.name, "pages");
  EXPECT_EQ(cache.memory, 64ull << 20);
  EXPECT_EQ(cache.disk, "");
  EXPECT_EQ(cache.inactive, 600'000u);
  ASSERT_EQ(cache.key.size(), 4u);
  EXPECT_EQ(cache.key[0].kind, CacheKeyPart::Kind::kScheme);
  EXPECT_EQ(cache.key[3].kind, CacheKeyPart::Kind::kQuery);
  EXPECT_TRUE(cache.default_ttl.empty());
  EXPECT_EQ(cache.max_entry, 1ull << 20);
  EXPECT_EQ(cache.lock_timeout, 5'000u);
  EXPECT_EQ(cache.stale_if_error, 0u);
  EXPECT_TRUE(cache.cache_status_header);
  EXPECT_EQ(cache.set_cookie, CacheConfig::SetCookie::kBypass);
  EXPECT_EQ(cache.where.line, 1u);
}

TEST(CacheSection, EveryKey) {
  CacheConfig cache = cacheOf(
      "memory = \"256m\"\ndisk = \"cache/shop\"\nmax_disk = \"10g\"\ninactive = \"1h\"\n"
      "key = [\"scheme\", \"host\", \"path\", \"query\", \"header:Accept-Language\", "
      "\"cookie:Session\", \"method\"]\n"
      "default_ttl = { \"200\" = \"10m\", \"301\" = \"1h\", \"404\" = \"1m\" }\n"
      "max_entry = \"8m\"\nlock_timeout = \"500ms\"\nstale_if_error = \"1d\"\n"
      "cache_status_header = false\nset_cookie = \"strip\"");
  EXPECT_EQ(cache.memory, 256ull << 20);
  EXPECT_EQ(cache.disk, "/etc/scalws/cache/shop");  // relative to the config file
  EXPECT_EQ(cache.max_disk, 10ull << 30);
  EXPECT_EQ(cache.inactive, 3'600'000u);
  ASSERT_EQ(cache.key.size(), 7u);
  EXPECT_EQ(cache.key[4].kind, CacheKeyPart::Kind::kHeader);
  EXPECT_EQ(cache.key[4].name, "accept-language");
  EXPECT_EQ(cache.key[5].kind, CacheKeyPart::Kind::kCookie);
  EXPECT_EQ(cache.key[5].name, "Session");  // cookie names keep their case
  EXPECT_EQ(cache.key[6].kind, CacheKeyPart::Kind::kMethod);
  ASSERT_EQ(cache.default_ttl.size(), 3u);
  EXPECT_EQ(cache.default_ttl[0].status, 200);
  EXPECT_EQ(cache.default_ttl[0].ttl, 600'000u);
  EXPECT_EQ(cache.default_ttl[1].status, 301);
  EXPECT_EQ(cache.default_ttl[2].ttl, 60'000u);
  EXPECT_EQ(cache.max_entry, 8ull << 20);
  EXPECT_EQ(cache.lock_timeout, 500u);
  EXPECT_EQ(cache.stale_if_error, 86'400'000u);
  EXPECT_FALSE(cache.cache_status_header);
  EXPECT_EQ(cache.set_cookie, CacheConfig::SetCookie::kStrip);
}

TEST(CacheSection, SmallMemoryLowersTheDefaultMaxEntry) {
  EXPECT_EQ(cacheOf("memory = \"1m\"").max_entry, 512u * 1024);
}

TEST(CacheSection, RefusesBadSizesAndDurations) {
  EXPECT_EQ(snippetErrors("[cache.pages]\nmemory = \"512k\"\n"),
            "t.toml:2:10: cache.pages.memory: must be between 1m and 1024g");
  EXPECT_EQ(snippetErrors("[cache.pages]\nmemory = \"2048g\"\n"),
            "t.toml:2:10: cache.pages.memory: must be between 1m and 1024g");
  EXPECT_EQ(snippetErrors("[cache.pages]\nmemory = \"lots\"\n"),
            "t.toml:2:10: cache.pages.memory: invalid size \"lots\" (expected a byte count, "
            "optionally with a k, m or g suffix, e.g. \"64k\" or \"10m\")");
  EXPECT_EQ(snippetErrors("[cache.pages]\nmax_entry = \"40m\"\n"),
            "t.toml:2:13: cache.pages.max_entry: must be at most half of memory (67108864 "
            "bytes)");
  EXPECT_EQ(snippetErrors("[cache.pages]\nmax_entry = 0\n"),
            "t.toml:2:13: cache.pages.max_entry: must be greater than zero");
  EXPECT_EQ(snippetErrors("[cache.pages]\ninactive = \"0s\"\n"),
            "t.toml:2:12: cache.pages.inactive: must be greater than zero");
  EXPECT_EQ(snippetErrors("[cache.pages]\nlock_timeout = -1\n"),
            "t.toml:2:16: cache.pages.lock_timeout: must not be negative, found -1");
  EXPECT_EQ(snippetErrors("[cache.pages]\nstale_if_error = \"1 day\"\n"),
            "t.toml:2:18: cache.pages.stale_if_error: invalid duration \"1 day\" (expected a "
            "number with a ms, s, m, h or d suffix, e.g. \"30s\" or \"500ms\"; a plain number "
            "is seconds)");
  EXPECT_EQ(snippetErrors("[cache.pages]\ncache_status_header = \"yes\"\n"),
            "t.toml:2:23: cache.pages.cache_status_header: expected a boolean, found a string");
  EXPECT_EQ(snippetErrors("[cache.pages]\nset_cookie = \"keep\"\n"),
            "t.toml:2:14: cache.pages.set_cookie: unknown value \"keep\" (expected \"bypass\", "
            "\"strip\" or \"store\")");
}

TEST(CacheSection, RefusesBadDiskSettings) {
  EXPECT_EQ(snippetErrors("[cache.pages]\nmax_disk = \"1g\"\n"),
            "t.toml:2:12: cache.pages.max_disk: needs `disk`, the directory it limits");
  EXPECT_EQ(snippetErrors("[cache.pages]\ndisk = \"/c\"\nmax_disk = 0\n"),
            "t.toml:3:12: cache.pages.max_disk: must be > 0");
  EXPECT_EQ(snippetErrors("[cache.pages]\ndisk = \"\"\n"),
            "t.toml:2:8: cache.pages.disk: must name a directory (leave it out for none)");
  EXPECT_EQ(snippetErrors("[cache.pages]\ndisk = \"/\"\n"),
            "t.toml:2:8: cache.pages.disk: must not be \"/\"");
  EXPECT_EQ(snippetErrors("[cache.pages]\ndisk = 5\n"),
            "t.toml:2:8: cache.pages.disk: expected a string, found an integer");
}

TEST(CacheSection, RefusesBadKeys) {
  EXPECT_EQ(snippetErrors("[cache.pages]\nkey = []\n"),
            "t.toml:2:7: cache.pages.key: must name at least one part");
  EXPECT_EQ(snippetErrors("[cache.pages]\nkey = \"path\"\n"),
            "t.toml:2:7: cache.pages.key: expected an array, found a string");
  EXPECT_EQ(snippetErrors("[cache.pages]\nkey = [\"path\", \"uri\"]\n"),
            "t.toml:2:16: cache.pages.key[1]: unknown element \"uri\" (expected \"scheme\", "
            "\"host\", \"path\", \"query\", \"method\", \"header:NAME\" or \"cookie:NAME\")");
  EXPECT_EQ(snippetErrors("[cache.pages]\nkey = [\"header:\"]\n"),
            "t.toml:2:8: cache.pages.key[0]: \"header:\": the name after \"header:\" must be a "
            "token (letters, digits and !#$%&'*+-.^_`|~)");
  EXPECT_EQ(snippetErrors("[cache.pages]\nkey = [\"cookie:a b\"]\n"),
            "t.toml:2:8: cache.pages.key[0]: \"cookie:a b\": the name after \"cookie:\" must be "
            "a token (letters, digits and !#$%&'*+-.^_`|~)");
  EXPECT_EQ(snippetErrors("[cache.pages]\nkey = [\"path\", \"path\"]\n"),
            "t.toml:2:16: cache.pages.key[1]: \"path\" is already part of the key");
  EXPECT_EQ(snippetErrors("[cache.pages]\nkey = [\"path\", 3]\n"),
            "t.toml:2:16: cache.pages.key[1]: expected a string, found an integer");
}

TEST(CacheSection, RefusesBadDefaultTtls) {
  EXPECT_EQ(snippetErrors("[cache.pages]\ndefault_ttl = { \"2xx\" = \"1m\" }\n"),
            "t.toml:2:17: cache.pages.default_ttl.2xx: expected a final status code from "
            "\"200\" to \"599\" as the key");
  EXPECT_EQ(snippetErrors("[cache.pages]\ndefault_ttl = { \"101\" = \"1m\" }\n"),
            "t.toml:2:17: cache.pages.default_ttl.101: expected a final status code from "
            "\"200\" to \"599\" as the key");
  EXPECT_EQ(snippetErrors("[cache.pages]\ndefault_ttl = { \"206\" = \"1m\" }\n"),
            "t.toml:2:17: cache.pages.default_ttl.206: a 206 response is never stored, so it "
            "has no TTL");
  EXPECT_EQ(snippetErrors("[cache.pages]\ndefault_ttl = { \"200\" = \"0s\" }\n"),
            "t.toml:2:25: cache.pages.default_ttl.200: must be greater than zero");
  EXPECT_EQ(snippetErrors("[cache.pages]\ndefault_ttl = \"10m\"\n"),
            "t.toml:2:15: cache.pages.default_ttl: expected a table, found a string");
}

TEST(CacheSection, RefusesBadNamesAndUnknownKeys) {
  EXPECT_EQ(snippetErrors("[cache.\"a b\"]\n"),
            "t.toml:1:8: cache: \"a b\" is not a cache name (letters, digits, '-', '_', '.'; at "
            "most 64)");
  EXPECT_EQ(snippetErrors("[cache.pages]\nmemroy = \"1m\"\n"),
            "t.toml:2:1: cache.pages: unknown key \"memroy\" (did you mean \"memory\"?)");
  EXPECT_EQ(snippetErrors("cache = 3\n"), "t.toml:1:9: cache: expected a table, found an integer");
}

TEST(CacheSection, ProxyRoutesAndPurgeRoutesNameACache) {
  std::string upstream = "[upstream.app]\nservers = [\"127.0.0.1:9000\"]\n";
  SiteConfig site = loadSnippet(upstream +
                                "[[route]]\nmatch = { prefix = \"/\" }\n"
                                "proxy = { upstream = \"app\", cache = \"pages\" }\n"
                                "[[route]]\nmatch = { exact = \"/purge\" }\n"
                                "cache_purge = { cache = \"pages\" }\n"
                                "[cache.pages]\n");
  ASSERT_EQ(site.routes.size(), 2u);
  EXPECT_EQ(std::get<ProxyAction>(site.routes[0].action).cache, "pages");
  EXPECT_EQ(std::get<CachePurgeAction>(site.routes[1].action).cache, "pages");
  EXPECT_EQ(snippetErrors(upstream + "[[route]]\nmatch = { prefix = \"/\" }\n"
                                     "proxy = { upstream = \"app\", cache = \"nope\" }\n"),
            "t.toml:5:37: route.proxy.cache: no [cache.nope] in this config");
  EXPECT_EQ(snippetErrors(upstream + "[[route]]\nmatch = { prefix = \"/\" }\n"
                                     "proxy = { upstream = \"app\", cache = \"\" }\n"),
            "t.toml:5:37: route.proxy.cache: must name a [cache.NAME] (leave it out for none)");
  EXPECT_EQ(
      snippetErrors("[[route]]\nmatch = { prefix = \"/\" }\ncache_purge = { cache = \"x\" }\n"),
      "t.toml:3:25: route.cache_purge.cache: no [cache.x] in this config");
  EXPECT_EQ(snippetErrors("[[route]]\nmatch = { prefix = \"/\" }\ncache_purge = {}\n"),
            "t.toml:3:15: route.cache_purge: missing required key \"cache\"");
}

}  // namespace
}  // namespace scalws::common::config
