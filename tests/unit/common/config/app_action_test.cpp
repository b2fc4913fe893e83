// route.app: an app by the name it is assigned to the instance under, with the options of
// a proxy route; accepted only under the controller (LoadOptions::apps_from_controller),
// refused standalone with a pointer to a proxy route to the app's sockets.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::errorsOf;
using testing::withListen;

LoadOptions appsUnderController() {
  LoadOptions options;
  options.server_table = common::config::ServerTable::kSiteOnly;
  options.php_pools_from_controller = true;
  options.apps_from_controller = true;
  return options;
}

Result<SiteConfig> loadAppRoute(const std::string& route) {
  return loadSiteConfigString(withListen("[[route]]\napp = " + route + "\n"), "/etc/scalws/t.toml",
                              appsUnderController());
}

TEST(AppAction, IsAProxyActionNamingAnAppWithTheProxysOptions) {
  Result<SiteConfig> site = loadAppRoute(
      "{ name = \"api\", strip_prefix = \"/api/\", timeout = \"30s\", websocket = false, "
      "set_request_headers = { \"X-Site\" = \"shop\" } }");
  ASSERT_TRUE(site.ok()) << site.status().message();
  const auto* proxy = std::get_if<ProxyAction>(&site->routes[0].action);
  ASSERT_NE(proxy, nullptr);
  EXPECT_EQ(proxy->app, "api");
  EXPECT_EQ(proxy->upstream, "");  // the worker sets it from the controller's grant
  EXPECT_EQ(proxy->strip_prefix, "/api");
  EXPECT_EQ(proxy->timeout, 30'000u);
  EXPECT_FALSE(proxy->websocket);
  ASSERT_EQ(proxy->set_request_headers.size(), 1u);
  EXPECT_EQ(proxy->where.toString(), "/etc/scalws/t.toml:2:7");
  EXPECT_EQ(UpstreamConfig::appUpstreamName("api"), "app:api");
  EXPECT_TRUE(site->upstreams.empty());
}

TEST(AppAction, RefusesBadNamesUnknownKeysAndAnUpstream) {
  auto errors = [](const std::string& route) {
    return errorsOf(withListen("[[route]]\napp = " + route + "\n"), appsUnderController());
  };
  EXPECT_NE(errors("{ timeout = \"1s\" }").find("route.app: missing required key \"name\""),
            std::string::npos)
      << errors("{ timeout = \"1s\" }");
  EXPECT_NE(errors("{ name = \"a b\" }").find("\"a b\" is not an app name"), std::string::npos);
  EXPECT_NE(errors("{ name = \"\" }").find("is not an app name"), std::string::npos);
  EXPECT_NE(errors("{ name = \"api\", upstream = \"x\" }").find("upstream"), std::string::npos);
  EXPECT_NE(errors("{ name = \"api\", timeout = \"0s\" }").find("must be greater than zero"),
            std::string::npos);
  EXPECT_NE(errors("\"api\"").find("route.app"), std::string::npos);
  // One action per route.
  EXPECT_NE(errorsOf(withListen("[[route]]\napp = { name = \"a\" }\nrespond = { body = \"x\" }\n"),
                     appsUnderController())
                .find("more than one action"),
            std::string::npos);
}

TEST(AppAction, StandaloneRefusesItAndSaysWhatToWriteInstead) {
  std::string errors = errorsOf(withListen("[[route]]\napp = { name = \"api\" }\n"));
  EXPECT_NE(errors.find("t.toml:2:7: route.app: apps are run by scalws-controller"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("proxy = { upstream = \"NAME\" }"), std::string::npos) << errors;
  EXPECT_NE(errors.find("unix:/run/scalws/apps/APP/0.sock"), std::string::npos) << errors;
}

}  // namespace
}  // namespace scalws::common::config
