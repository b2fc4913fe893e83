// A PHP pool's address on its own (what `scalwsctl pool add --address` is checked with),
// and [php_pool] tables when the pools come from the controller.
#include "common/config/php_pool_address.h"

#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

TEST(PhpPoolAddress, UnixAndTcp) {
  PhpPoolConfig pool;
  ASSERT_TRUE(parsePhpPoolAddress("unix:/run/scalws/php/shop.sock", pool).ok());
  EXPECT_EQ(pool.kind, PhpPoolConfig::Kind::kUnix);
  EXPECT_EQ(pool.unix_path, "/run/scalws/php/shop.sock");
  EXPECT_EQ(pool.address, "unix:/run/scalws/php/shop.sock");
  ASSERT_TRUE(parsePhpPoolAddress("tcp:localhost:9000", pool).ok());
  EXPECT_EQ(pool.kind, PhpPoolConfig::Kind::kTcp);
  EXPECT_EQ(pool.host, "127.0.0.1");
  EXPECT_EQ(pool.port, 9000);
  EXPECT_EQ(pool.unix_path, "");
  ASSERT_TRUE(parsePhpPoolAddress("tcp:[::1]:9001", pool).ok());
  EXPECT_EQ(pool.host, "::1");
}

TEST(PhpPoolAddress, RefusalsLeaveThePoolAlone) {
  PhpPoolConfig pool;
  ASSERT_TRUE(parsePhpPoolAddress("unix:/ok.sock", pool).ok());
  for (const char* bad :
       {"", "unix:", "unix:relative.sock", "tcp:", "tcp:127.0.0.1", "tcp:127.0.0.1:0",
        "tcp:php.example:9000", "http://127.0.0.1:9000", "/run/php.sock"}) {
    EXPECT_FALSE(parsePhpPoolAddress(bad, pool).ok()) << bad;
  }
  EXPECT_FALSE(parsePhpPoolAddress("unix:/" + std::string(120, 'a'), pool).ok());
  EXPECT_EQ(pool.address, "unix:/ok.sock");
}

TEST(PhpPoolAddress, UnderTheControllerTablesOnlyTune) {
  LoadOptions controller;
  controller.php_pools_from_controller = true;
  const std::string route =
      "[[listen]]\naddress = \"127.0.0.1:8080\"\n"
      "[[route]]\nphp = { pool = \"main\", root = \"/srv\" }\n";
  // No table at all: the controller supplies the pool.
  EXPECT_EQ(testing::errorsOf(route, controller), "ok");
  // Standalone, the same config names a pool that does not exist.
  EXPECT_NE(testing::errorsOf(route), "ok");
  EXPECT_EQ(testing::errorsOf(route + "[php_pool.main]\nqueue_timeout = \"2s\"\n", controller),
            "ok");
  EXPECT_EQ(
      testing::errorsOf(route + "[php_pool.main]\naddress = \"unix:/run/x.sock\"\n", controller),
      "t.toml:6:11: php_pool.main.address: set by the controller for the pool assigned "
      "to this instance (scalwsctl pool add / pool assign); leave it out here");
}

}  // namespace
}  // namespace scalws::common::config
