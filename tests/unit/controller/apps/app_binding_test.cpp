// How an instance's app routes find the controller's apps: the grants of the apps assigned
// to it (by the name each is assigned as, with its sockets), and the names left unbound.
#include "controller/apps/app_binding.h"

#include <gtest/gtest.h>

#include "common/config/config_loader.h"

namespace scalws::controller {
namespace {

state::AppRecord bindingRecord(const std::string& name, uint32_t processes,
                               std::optional<std::string> instance, const std::string& as) {
  AppSpec spec;
  spec.name = name;
  spec.entry = "/srv/" + name + "/server.js";
  spec.processes = processes;
  spec.user = "nobody";
  EXPECT_TRUE(validateAppSpec(spec).ok());
  state::AppRecord record;
  record.name = name;
  record.spec = appSpecJson(spec).dump();
  record.instance = std::move(instance);
  record.assigned_as = as;
  return record;
}

AppSockets socketsUnder(const std::string& dir) {
  return [dir](const AppSpec& spec) { return appSocketPaths(dir, spec); };
}

common::config::SiteConfig bindingSite(const std::string& routes) {
  common::config::LoadOptions options;
  options.server_table = common::config::ServerTable::kSiteOnly;
  options.apps_from_controller = true;
  auto loaded = common::config::loadSiteConfigString(
      "[[listen]]\naddress = \"127.0.0.1:8080\"\n" + routes, "/etc/s.toml", options);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? std::move(loaded).value() : common::config::SiteConfig();
}

TEST(AppBindingTest, GrantsAreTheAppsAssignedToTheInstanceByTheirNames) {
  std::vector<state::AppRecord> apps = {
      bindingRecord("web", 2, "shop", "front"), bindingRecord("api", 1, "shop", ""),
      bindingRecord("blog", 1, "other", "front"), bindingRecord("idle", 1, {}, "")};
  std::vector<ipc::AppGrant> grants = appGrantsFor("shop", apps, socketsUnder("/run/scalws/apps"));
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0].name, "api");  // ordered by name; assigned without --as: its own
  EXPECT_EQ(grants[0].sockets, (std::vector<std::string>{"/run/scalws/apps/api/0.sock"}));
  EXPECT_EQ(grants[1].name, "front");
  EXPECT_EQ(grants[1].sockets, (std::vector<std::string>{"/run/scalws/apps/web/0.sock",
                                                         "/run/scalws/apps/web/1.sock"}));
}

TEST(AppBindingTest, UnboundNamesAreRefusedWithTheCommandThatBindsThem) {
  common::config::SiteConfig s = bindingSite(
      "[[route]]\nmatch = { prefix = \"/a/\" }\napp = { name = \"api\" }\n"
      "[[route]]\nmatch = { prefix = \"/b/\" }\napp = { name = \"api\" }\n"
      "[[route]]\napp = { name = \"front\" }\n");
  EXPECT_EQ(appRouteNames(s), (std::vector<std::string>{"api", "front"}));
  EXPECT_TRUE(checkAppNames("shop", s, {{"api", {"/a"}}, {"front", {"/b"}}}).ok());
  common::Status missing = checkAppNames("shop", s, {{"api", {"/a"}}});
  EXPECT_EQ(missing.code(), common::StatusCode::kFailedPrecondition);
  EXPECT_EQ(missing.message(),
            "instance shop: its app routes use an app no app is assigned as: app 'front' "
            "(scalwsctl app assign APP shop --as front)");
}

}  // namespace
}  // namespace scalws::controller
