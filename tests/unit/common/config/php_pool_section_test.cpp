// [php_pool.NAME]: addresses, limits, and php routes naming pools that exist.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

PhpPoolConfig poolOf(const std::string& keys) {
  SiteConfig site = loadSnippet("[php_pool.main]\n" + keys + "\n");
  EXPECT_EQ(site.php_pools.size(), 1u);
  return site.php_pools.empty() ? PhpPoolConfig{} : site.php_pools[0];
}

TEST(PhpPoolSection, UnixAddressAndDefaults) {
  PhpPoolConfig pool = poolOf("address = \"unix:/run/php/fpm.sock\"");
  EXPECT_EQ(pool.name, "main");
  EXPECT_EQ(pool.kind, PhpPoolConfig::Kind::kUnix);
  EXPECT_EQ(pool.unix_path, "/run/php/fpm.sock");
  EXPECT_FALSE(pool.max_conns.has_value());
  EXPECT_EQ(pool.timeout, 60'000u);
  EXPECT_EQ(pool.queue_timeout, 5'000u);
  EXPECT_EQ(pool.queue, 256u);
}

TEST(PhpPoolSection, TcpAddressAndLimits) {
  PhpPoolConfig pool = poolOf(
      "address = \"tcp:127.0.0.1:9000\"\nmax_conns = 8\ntimeout = \"30s\"\n"
      "queue_timeout = \"250ms\"\nqueue = 10");
  EXPECT_EQ(pool.kind, PhpPoolConfig::Kind::kTcp);
  EXPECT_EQ(pool.host, "127.0.0.1");
  EXPECT_EQ(pool.port, 9000);
  EXPECT_EQ(pool.max_conns, 8u);
  EXPECT_EQ(pool.timeout, 30'000u);
  EXPECT_EQ(pool.queue_timeout, 250u);
  EXPECT_EQ(pool.queue, 10u);
  EXPECT_EQ(poolOf("address = \"tcp:[::1]:9000\"").host, "::1");
  EXPECT_EQ(poolOf("address = \"tcp:localhost:9001\"").host, "127.0.0.1");
}

TEST(PhpPoolSection, RefusesBadAddresses) {
  EXPECT_EQ(snippetErrors("[php_pool.main]\n"),
            "t.toml:1:1: php_pool.main: missing required key \"address\"");
  EXPECT_EQ(snippetErrors("[php_pool.main]\naddress = \"unix:run/fpm.sock\"\n"),
            "t.toml:2:11: php_pool.main.address: the unix socket path must be absolute, found "
            "\"run/fpm.sock\"");
  EXPECT_EQ(snippetErrors("[php_pool.main]\naddress = \"unix:/" + std::string(120, 'a') + "\"\n"),
            "t.toml:2:11: php_pool.main.address: the unix socket path is longer than 107 bytes");
  EXPECT_EQ(snippetErrors("[php_pool.main]\naddress = \"127.0.0.1:9000\"\n"),
            "t.toml:2:11: php_pool.main.address: expected \"unix:/path/to/socket\" or "
            "\"tcp:host:port\", found \"127.0.0.1:9000\"");
  EXPECT_NE(snippetErrors("[php_pool.main]\naddress = \"tcp:php.example:9000\"\n"), "ok");
  EXPECT_EQ(snippetErrors("[php_pool.main]\naddress = \"tcp:127.0.0.1:0\"\n"),
            "t.toml:2:11: php_pool.main.address: port must be between 1 and 65535, found \"0\"");
}

TEST(PhpPoolSection, RefusesBadLimitsAndNames) {
  EXPECT_EQ(snippetErrors("[php_pool.main]\naddress = \"unix:/s\"\nmax_conns = 0\n"),
            "t.toml:3:13: php_pool.main.max_conns: must be between 1 and 65535, found 0");
  EXPECT_EQ(snippetErrors("[php_pool.main]\naddress = \"unix:/s\"\ntimeout = \"0s\"\n"),
            "t.toml:3:11: php_pool.main.timeout: must be greater than zero");
  EXPECT_NE(snippetErrors("[php_pool.main]\naddress = \"unix:/s\"\nmax_con = 3\n")
                .find("php_pool.main: unknown key \"max_con\""),
            std::string::npos);
  EXPECT_EQ(snippetErrors("[php_pool.\"a b\"]\naddress = \"unix:/s\"\n"),
            "t.toml:1:11: php_pool: \"a b\" is not a pool name (letters, digits, '-', '_', '.'; "
            "at most 64)");
}

TEST(PhpPoolSection, RoutesMustNameAnExistingPool) {
  EXPECT_EQ(snippetErrors("[[route]]\nphp = { pool = \"main\", root = \"/srv\" }\n"),
            "t.toml:2:7: route.php.pool: no [php_pool.main] in this config");
  EXPECT_EQ(snippetErrors("[[route]]\nphp = { pool = \"main\", root = \"/srv\" }\n"
                          "[php_pool.main]\naddress = \"unix:/s\"\n"),
            "ok");
}

}  // namespace
}  // namespace scalws::common::config
