// An instance worker's apps: the controller's grants turned into an upstream per app a
// route names, the routes aimed at it, and routes naming an app nobody granted.
#include "worker/server/instance_apps.h"

#include <gtest/gtest.h>

#include "common/config/config_loader.h"
#include "worker/server/instance_pools.h"
#include "worker/server/instance_session.h"

namespace scalws::worker {
namespace {

using common::config::ProxyAction;
using common::config::SiteConfig;
using common::config::UpstreamServerConfig;
using ipc::AppGrant;

constexpr const char* kAppsSite =
    "[[listen]]\naddress = \"127.0.0.1:8080\"\n"
    "[[route]]\nmatch = { prefix = \"/api/\" }\napp = { name = \"api\", timeout = \"30s\" }\n"
    "[[route]]\nmatch = { prefix = \"/v2/\" }\napp = { name = \"api\" }\n"
    "[[route]]\napp = { name = \"front\" }\n";

SiteConfig loadAppsSite(const std::string& text = kAppsSite) {
  common::config::LoadOptions options;
  options.server_table = common::config::ServerTable::kSiteOnly;
  options.php_pools_from_controller = true;
  options.apps_from_controller = true;
  auto site = common::config::loadSiteConfigString(text, "/etc/scalws/site.toml", options);
  EXPECT_TRUE(site.ok()) << site.status().message();
  return site.ok() ? std::move(site).value() : SiteConfig();
}

const ProxyAction& appProxyOf(const SiteConfig& site, size_t route) {
  return std::get<ProxyAction>(site.routes[route].action);
}

TEST(InstanceAppsTest, EachGrantedAppARouteNamesBecomesAnUpstreamOfItsSockets) {
  SiteConfig site = loadAppsSite();
  std::vector<AppGrant> grants = {
      {"api", {"/run/scalws/apps/shop-api/0.sock", "/run/scalws/apps/shop-api/1.sock"}},
      {"front", {"/run/scalws/apps/shop-web/0.sock"}},
      {"unused", {"/run/scalws/apps/other/0.sock"}}};
  ASSERT_TRUE(applyAppGrants(site, grants).ok());
  ASSERT_EQ(site.upstreams.size(), 2u);  // one per app the routes use, once each
  EXPECT_EQ(site.upstreams[0].name, "app:api");
  ASSERT_EQ(site.upstreams[0].servers.size(), 2u);
  const UpstreamServerConfig& s = site.upstreams[0].servers[1];
  EXPECT_EQ(s.kind, UpstreamServerConfig::Kind::kUnix);
  EXPECT_EQ(s.unix_path, "/run/scalws/apps/shop-api/1.sock");
  EXPECT_EQ(s.address, "unix:/run/scalws/apps/shop-api/1.sock");
  EXPECT_EQ(site.upstreams[0].keepalive, 32u);  // an [upstream]'s defaults
  EXPECT_EQ(site.upstreams[1].name, "app:front");
  EXPECT_EQ(appProxyOf(site, 0).upstream, "app:api");
  EXPECT_EQ(appProxyOf(site, 0).timeout, 30'000u);
  EXPECT_EQ(appProxyOf(site, 1).upstream, "app:api");
  EXPECT_EQ(appProxyOf(site, 2).upstream, "app:front");
}

TEST(InstanceAppsTest, ARouteNamingAnAppNobodyGrantedIsRefusedOnce) {
  SiteConfig site = loadAppsSite();
  common::Status missing = applyAppGrants(site, {{"front", {"/run/a/0.sock"}}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(),
            "/etc/scalws/site.toml:5:7: route.app.name: no app is assigned to this instance "
            "as \"api\"");
}

TEST(InstanceAppsTest, TheSnapshotProxiesToTheAppAndUnixSocketsEnterTheSandboxCheck) {
  ipc::WorkerSettings settings;
  settings.instance = "shop";
  settings.mode = common::config::WorkerMode::kMulti;
  settings.loops = 1;
  settings.user = "nobody";
  settings.config = kAppsSite;
  settings.config_path = "/etc/scalws/site.toml";
  settings.apps = {{"api", {"/run/a/0.sock"}}, {"front", {"/run/b/0.sock"}}};
  auto snapshot = buildInstanceSnapshot(settings);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().message();
  EXPECT_EQ((*snapshot)->site().upstreams.size(), 2u);
  settings.apps.pop_back();
  EXPECT_FALSE(buildInstanceSnapshot(settings).ok());

  // A worker that started without a unix socket cannot take an app on reload.
  sandbox::SandboxReport report;
  report.seccomp.enforced = true;
  SiteConfig tcp_only = loadAppsSite("[[listen]]\naddress = \"127.0.0.1:8080\"\n");
  ConnectAllowance allowance = connectAllowanceOf(report, tcp_only);
  EXPECT_FALSE(allowance.unix_sockets);
  SiteConfig next = loadAppsSite();
  ASSERT_TRUE(
      applyAppGrants(next, {{"api", {"/run/a/0.sock"}}, {"front", {"/run/b/0.sock"}}}).ok());
  common::Status refused = poolsFitSandbox(allowance, next);
  EXPECT_EQ(refused.code(), common::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("upstream app:api server unix:/run/a/0.sock"), std::string::npos)
      << refused.message();
  EXPECT_TRUE(connectAllowanceOf(report, next).unix_sockets);
}

}  // namespace
}  // namespace scalws::worker
