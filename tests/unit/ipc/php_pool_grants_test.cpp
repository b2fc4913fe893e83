// The php_pools field of config/reload messages.
#include "ipc/php_pool_grants.h"

#include <gtest/gtest.h>

namespace scalws::ipc {
namespace {

TEST(PhpPoolGrantsTest, RoundTrip) {
  std::vector<PhpPoolGrant> grants = {{"main", "unix:/run/scalws/php/shop.sock", 8, 4},
                                      {"legacy", "tcp:127.0.0.1:9000", 0, 0}};
  Json args = {{"php_pools", phpPoolGrantsJson(grants)}};
  auto parsed = parsePhpPoolGrants(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(*parsed, grants);
  auto none = parsePhpPoolGrants(Json::object());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(PhpPoolGrantsTest, MisshapenGrantsAreRefused) {
  Json good = {{"name", "main"}, {"address", "unix:/s"}, {"max_conns", 4u}, {"share", 2u}};
  auto with = [](Json entry) {
    Json list = Json::array();
    list.push_back(std::move(entry));
    return Json{{"php_pools", list}};
  };
  EXPECT_TRUE(parsePhpPoolGrants(with(good)).ok());
  std::vector<Json> bad = {
      {{"php_pools", "main"}},
      with(Json{{"address", "unix:/s"}, {"max_conns", 4u}, {"share", 2u}}),
      with(Json{{"name", ""}, {"address", "unix:/s"}, {"max_conns", 4u}, {"share", 2u}}),
      with(Json{{"name", "m"}, {"address", "unix:/s"}, {"max_conns", 4u}, {"share", 5u}}),
      with(Json{{"name", "m"}, {"address", "unix:/s"}, {"max_conns", 4u}, {"share", 0u}}),
      with(Json{{"name", "m"}, {"address", "unix:/s"}, {"max_conns", 0u}, {"share", 1u}}),
      with(Json{{"name", "m"}, {"address", "unix:/s"}, {"max_conns", 70000u}, {"share", 1u}}),
      with(Json{{"name", "m"}, {"address", 5}, {"max_conns", 4u}, {"share", 2u}}),
      Json{{"php_pools", Json::array({good, good})}},
  };
  for (const Json& args : bad) EXPECT_FALSE(parsePhpPoolGrants(args).ok()) << args.dump();
}

}  // namespace
}  // namespace scalws::ipc
