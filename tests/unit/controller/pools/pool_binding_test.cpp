// How an instance's php routes are bound to the controller's pools: shares, grants and the
// refusal naming what is missing.
#include "controller/pools/pool_binding.h"

#include <gtest/gtest.h>

#include "controller/instances/instance_config.h"

namespace scalws::controller {
namespace {

state::PoolRecord pool(const std::string& name, uint32_t max_conns,
                       std::optional<std::string> instance, const std::string& as = "") {
  state::PoolRecord p;
  p.name = name;
  p.address = "unix:/run/" + name + ".sock";
  p.max_conns = max_conns;
  p.instance = std::move(instance);
  p.assigned_as = p.instance ? (as.empty() ? name : as) : "";
  return p;
}

state::InstanceRecord instanceRecord(const std::string& name, common::CpuSet cpus) {
  state::InstanceRecord r;
  r.name = name;
  r.assigned_cpus = std::move(cpus);
  return r;
}

TEST(PoolBindingTest, ShareDividesMaxConnsAcrossEveryLoop) {
  EXPECT_EQ(poolShareFor(8, 4), 2u);
  EXPECT_EQ(poolShareFor(9, 4), 2u);  // floor: the loops together never exceed max_conns
  EXPECT_EQ(poolShareFor(3, 4), 1u);  // at least one, so every loop can serve
  EXPECT_EQ(poolShareFor(8, 1), 8u);
  EXPECT_EQ(poolShareFor(0, 4), 0u);  // unknown: a connection per request
  EXPECT_EQ(poolShareFor(8, 0), 8u);
  EXPECT_EQ(instanceLoops(instanceRecord("a", common::CpuSet{0, 1, 2})), 3u);
  EXPECT_EQ(instanceLoops(instanceRecord("a", common::CpuSet())), 1u);
}

TEST(PoolBindingTest, GrantsAreThePoolsOfTheInstanceUnderTheirNames) {
  std::vector<state::PoolRecord> pools = {
      pool("shop-fpm", 8, "shop", "main"), pool("other", 4, "blog"),
      pool("admin-fpm", 2, "shop", "admin"), pool("free", 4, std::nullopt)};
  std::vector<ipc::PhpPoolGrant> grants =
      poolGrantsFor(instanceRecord("shop", common::CpuSet{0, 1}), pools);
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0], (ipc::PhpPoolGrant{"admin", "unix:/run/admin-fpm.sock", 2, 1}));
  EXPECT_EQ(grants[1], (ipc::PhpPoolGrant{"main", "unix:/run/shop-fpm.sock", 8, 4}));
  EXPECT_TRUE(poolGrantsFor(instanceRecord("none", common::CpuSet{0}), pools).empty());
}

TEST(PoolBindingTest, EveryRouteNameMustBeBound) {
  auto site = loadInstanceConfig(
      "[[listen]]\naddress = \"127.0.0.1:8080\"\n"
      "[[route]]\nmatch = { prefix = \"/admin/\" }\nphp = { pool = \"admin\", root = \"/srv\" }\n"
      "[[route]]\nphp = { pool = \"main\", root = \"/srv\" }\n"
      "[[route]]\nmatch = { suffix = \".php\" }\nphp = { pool = \"main\", root = \"/srv\" }\n",
      "/etc/shop.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  EXPECT_EQ(phpPoolNames(*site), (std::vector<std::string>{"admin", "main"}));

  std::vector<ipc::PhpPoolGrant> main_only = {{"main", "unix:/run/m.sock", 4, 4}};
  common::Status missing = checkPoolNames("shop", *site, main_only);
  EXPECT_EQ(missing.code(), common::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("pool 'admin' (scalwsctl pool assign POOL shop --as admin)"),
            std::string::npos)
      << missing.message();
  EXPECT_EQ(missing.message().find("'main'"), std::string::npos);
  main_only.push_back({"admin", "tcp:127.0.0.1:9000", 0, 0});
  EXPECT_TRUE(checkPoolNames("shop", *site, main_only).ok());
}

TEST(PoolBindingTest, InstanceConfigsLeavePoolAddressesToTheController) {
  const std::string listen = "[[listen]]\naddress = \"127.0.0.1:8080\"\n";
  auto tuned = loadInstanceConfig(listen +
                                      "[[route]]\nphp = { pool = \"main\", root = \"/srv\" }\n"
                                      "[php_pool.main]\ntimeout = \"5s\"\nqueue = 10\n",
                                  "/etc/a.toml");
  ASSERT_TRUE(tuned.ok()) << tuned.status().message();
  ASSERT_EQ(tuned->php_pools.size(), 1u);
  EXPECT_EQ(tuned->php_pools[0].timeout, 5000u);
  auto addressed = loadInstanceConfig(
      listen + "[php_pool.main]\naddress = \"unix:/run/other-tenant.sock\"\nmax_conns = 4\n",
      "/etc/a.toml");
  ASSERT_FALSE(addressed.ok());
  EXPECT_NE(addressed.status().message().find(
                "/etc/a.toml:4:11: php_pool.main.address: set by the controller"),
            std::string::npos)
      << addressed.status().message();
  EXPECT_NE(addressed.status().message().find("php_pool.main.max_conns: set by the controller"),
            std::string::npos);
}

}  // namespace
}  // namespace scalws::controller
