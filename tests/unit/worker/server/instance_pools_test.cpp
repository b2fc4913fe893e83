// An instance worker's PHP pools: the controller's grants merged into the config, the
// shares it computed, and reloads that would leave the sandbox in force.
#include "worker/server/instance_pools.h"

#include <gtest/gtest.h>

#include "common/config/config_loader.h"
#include "sandbox/landlock_abi.h"
#include "worker/server/instance_session.h"

namespace scalws::worker {
namespace {

using common::config::PhpPoolConfig;
using common::config::SiteConfig;
using ipc::PhpPoolGrant;

constexpr const char* kPoolsSite =
    "[[listen]]\naddress = \"127.0.0.1:8080\"\n"
    "[[route]]\nmatch = { prefix = \"/admin/\" }\nphp = { pool = \"admin\", root = \"/tmp\" }\n"
    "[[route]]\nphp = { pool = \"main\", root = \"/tmp\" }\n"
    "[php_pool.main]\ntimeout = \"7s\"\n"
    "[php_pool.unused]\nqueue = 3\n";

SiteConfig load(const std::string& text = kPoolsSite) {
  common::config::LoadOptions options;
  options.server_table = common::config::ServerTable::kSiteOnly;
  options.php_pools_from_controller = true;
  auto site = common::config::loadSiteConfigString(text, "/etc/scalws/site.toml", options);
  EXPECT_TRUE(site.ok()) << site.status().message();
  return site.ok() ? std::move(site).value() : SiteConfig();
}

TEST(InstancePoolsTest, GrantsGiveAddressesAndKeepTheTuning) {
  SiteConfig site = load();
  std::vector<PhpPoolGrant> grants = {{"main", "unix:/run/scalws/php/shop.sock", 8, 2},
                                      {"admin", "tcp:127.0.0.1:9000", 0, 0}};
  ASSERT_TRUE(applyPhpPoolGrants(site, grants).ok());
  ASSERT_EQ(site.php_pools.size(), 2u);  // "unused" was granted by nobody: dropped
  const PhpPoolConfig& main = site.php_pools[0];
  EXPECT_EQ(main.name, "main");
  EXPECT_EQ(main.unix_path, "/run/scalws/php/shop.sock");
  EXPECT_EQ(main.max_conns, 8u);
  EXPECT_EQ(main.timeout, 7000u);  // from its table
  const PhpPoolConfig& admin = site.php_pools[1];
  EXPECT_EQ(admin.kind, PhpPoolConfig::Kind::kTcp);
  EXPECT_EQ(admin.port, 9000);
  EXPECT_FALSE(admin.max_conns.has_value());
  EXPECT_EQ(phpPoolShares(grants), (std::map<std::string, uint32_t>{{"main", 2}}));
}

TEST(InstancePoolsTest, ARouteWithoutAGrantIsRefusedByName) {
  SiteConfig site = load();
  common::Status missing =
      applyPhpPoolGrants(site, {{"main", "unix:/run/scalws/php/shop.sock", 8, 2}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("/etc/scalws/site.toml:5:7: route.php.pool: no PHP pool is "
                                   "assigned to this instance as \"admin\""),
            std::string::npos)
      << missing.message();
  EXPECT_FALSE(
      applyPhpPoolGrants(site, {{"main", "unix:relative", 8, 2}, {"admin", "unix:/a.sock", 1, 1}})
          .ok());
}

TEST(InstancePoolsTest, TheSnapshotUsesTheControllersShare) {
  ipc::WorkerSettings settings;
  settings.instance = "shop";
  settings.mode = common::config::WorkerMode::kMulti;
  settings.loops = 1;
  settings.user = "nobody";
  settings.config = kPoolsSite;
  settings.config_path = "/etc/scalws/site.toml";
  settings.php_pools = {{"main", "unix:/run/scalws/php/shop.sock", 9, 3},
                        {"admin", "tcp:127.0.0.1:9000", 0, 0}};
  auto snapshot = buildInstanceSnapshot(settings);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().message();
  const auto& pools = (*snapshot)->phpPools();
  ASSERT_EQ(pools.size(), 2u);
  // One loop in this process, but the controller counted the instance's three.
  EXPECT_TRUE(pools[0].keep_conn);
  EXPECT_EQ(pools[0].share, 3u);
  EXPECT_FALSE(pools[1].keep_conn);
  settings.php_pools.clear();
  EXPECT_FALSE(buildInstanceSnapshot(settings).ok());
}

TEST(InstancePoolsTest, ReloadsMustStayInsideTheSandbox) {
  SiteConfig start = load();
  ASSERT_TRUE(applyPhpPoolGrants(start, {{"main", "tcp:127.0.0.1:9000", 4, 4},
                                         {"admin", "tcp:127.0.0.1:9000", 4, 4}})
                  .ok());
  sandbox::SandboxReport report;
  report.seccomp.enforced = true;
  report.landlock.enforced = true;
  report.landlock.handledNet = sandbox::landlock_abi::kNetConnectTcp;
  report.landlock.tcpConnectPorts = {9000};
  ConnectAllowance allowance = connectAllowanceOf(report, start);
  EXPECT_FALSE(allowance.unix_sockets);
  EXPECT_FALSE(allowance.any_tcp_port);

  SiteConfig same_port = load();
  ASSERT_TRUE(applyPhpPoolGrants(same_port, {{"main", "tcp:127.0.0.1:9000", 2, 2},
                                             {"admin", "tcp:[::1]:9000", 4, 4}})
                  .ok());
  EXPECT_TRUE(poolsFitSandbox(allowance, same_port).ok());
  SiteConfig other_port = load();
  ASSERT_TRUE(applyPhpPoolGrants(other_port, {{"main", "tcp:127.0.0.1:9001", 2, 2},
                                              {"admin", "tcp:127.0.0.1:9000", 4, 4}})
                  .ok());
  common::Status refused = poolsFitSandbox(allowance, other_port);
  EXPECT_EQ(refused.code(), common::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("tcp:127.0.0.1:9001"), std::string::npos);
  EXPECT_NE(refused.message().find("restart"), std::string::npos);
  SiteConfig unix_pool = load();
  ASSERT_TRUE(applyPhpPoolGrants(unix_pool, {{"main", "unix:/run/a.sock", 2, 2},
                                             {"admin", "tcp:127.0.0.1:9000", 4, 4}})
                  .ok());
  EXPECT_FALSE(poolsFitSandbox(allowance, unix_pool).ok());

  // Started on a unix pool, without Landlock's TCP rules (older kernel or sandbox off).
  sandbox::SandboxReport loose;
  loose.seccomp.enforced = true;
  ConnectAllowance from_unix = connectAllowanceOf(loose, unix_pool);
  EXPECT_TRUE(from_unix.unix_sockets);
  EXPECT_TRUE(from_unix.any_tcp_port);
  EXPECT_TRUE(poolsFitSandbox(from_unix, other_port).ok());
  EXPECT_TRUE(poolsFitSandbox(ConnectAllowance(), unix_pool).ok());
}

TEST(InstancePoolsTest, UpstreamsMustStayInsideTheSandboxToo) {
  const std::string upstreams = std::string(kPoolsSite) +
                                "[[route]]\nmatch = { prefix = \"/api/\" }\nproxy = { upstream = "
                                "\"api\" }\n[upstream.api]\nservers = [\"127.0.0.1:8081\"]\n";
  SiteConfig start = load(upstreams);
  ASSERT_TRUE(applyPhpPoolGrants(start, {{"main", "tcp:127.0.0.1:9000", 4, 4},
                                         {"admin", "tcp:127.0.0.1:9000", 4, 4}})
                  .ok());
  sandbox::SandboxReport report;
  report.seccomp.enforced = true;
  report.landlock.enforced = true;
  report.landlock.handledNet = sandbox::landlock_abi::kNetConnectTcp;
  report.landlock.tcpConnectPorts = {8081, 9000};
  ConnectAllowance allowance = connectAllowanceOf(report, start);
  EXPECT_TRUE(poolsFitSandbox(allowance, start).ok());
  std::string moved = upstreams;
  moved.replace(moved.find("8081"), 4, "8082");
  SiteConfig next = load(moved);
  ASSERT_TRUE(applyPhpPoolGrants(next, {{"main", "tcp:127.0.0.1:9000", 4, 4},
                                        {"admin", "tcp:127.0.0.1:9000", 4, 4}})
                  .ok());
  common::Status refused = poolsFitSandbox(allowance, next);
  EXPECT_EQ(refused.code(), common::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("upstream api server 127.0.0.1:8082"), std::string::npos);
  // A unix-socket upstream in the start config allows unix sockets.
  std::string unix_text = upstreams;
  unix_text.replace(unix_text.find("127.0.0.1:8081"), 14, "unix:/run/api.sock");
  SiteConfig unix_start = load(unix_text);
  EXPECT_TRUE(connectAllowanceOf(report, unix_start).unix_sockets);
}

TEST(InstancePoolsTest, AnAllowanceAllowsUnixSocketsAndTcpPortsApart) {
  ConnectAllowance open;
  EXPECT_TRUE(open.allows(true, 0));
  EXPECT_TRUE(open.allows(false, 9000));
  ConnectAllowance narrow;
  narrow.unix_sockets = false;
  narrow.any_tcp_port = false;
  narrow.tcp_ports = {9000, 8080};
  EXPECT_FALSE(narrow.allows(true, 9000));  // a unix socket's port means nothing
  EXPECT_TRUE(narrow.allows(false, 8080));
  EXPECT_FALSE(narrow.allows(false, 9001));
  ConnectAllowance unix_only;
  unix_only.any_tcp_port = false;
  EXPECT_TRUE(unix_only.allows(true, 0));
  EXPECT_FALSE(unix_only.allows(false, 80));
}

}  // namespace
}  // namespace scalws::worker
