// The apps field of config/reload messages (and of an attach hello's settings).
#include "ipc/app_grants.h"

#include <gtest/gtest.h>

#include "ipc/worker_messages.h"

namespace scalws::ipc {
namespace {

TEST(AppGrantsTest, RoundTripAndAbsentWhenThereAreNone) {
  std::vector<AppGrant> grants = {{"api", {"/run/scalws/apps/api/0.sock", "/run/x/1.sock"}},
                                  {"front", {"/run/scalws/apps/web/0.sock"}}};
  Json args = Json::object();
  putAppGrants(grants, args);
  auto parsed = parseAppGrants(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(*parsed, grants);
  Json empty = Json::object();
  putAppGrants({}, empty);
  EXPECT_FALSE(empty.contains("apps"));
  auto none = parseAppGrants(empty);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(AppGrantsTest, MisshapenGrantsAreRefused) {
  Json good = {{"name", "api"}, {"sockets", {"/run/a/0.sock"}}};
  auto with = [](Json entry) {
    Json list = Json::array();
    list.push_back(std::move(entry));
    return Json{{"apps", list}};
  };
  EXPECT_TRUE(parseAppGrants(with(good)).ok());
  std::vector<Json> bad = {
      {{"apps", "api"}},
      with(Json{{"sockets", {"/run/a/0.sock"}}}),
      with(Json{{"name", ""}, {"sockets", {"/run/a/0.sock"}}}),
      with(Json{{"name", "api"}}),
      with(Json{{"name", "api"}, {"sockets", Json::array()}}),
      with(Json{{"name", "api"}, {"sockets", {"relative.sock"}}}),
      with(Json{{"name", "api"}, {"sockets", {5}}}),
      with(Json{{"name", "api"}, {"sockets", {"/" + std::string(120, 'a')}}}),
      with(Json("api")),
      Json{{"apps", Json::array({good, good})}},
  };
  for (const Json& args : bad) EXPECT_FALSE(parseAppGrants(args).ok()) << args.dump();
}

TEST(AppGrantsTest, ConfigAndReloadCarryThem) {
  ReloadArgs reload{"x = 1", "/etc/a.toml", {}, {{"api", {"/run/a/0.sock"}}}};
  auto back = ReloadArgs::decode(reload.encode());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->apps, reload.apps);
  ConfigArgs config;
  config.settings.instance = "shop";
  config.settings.user = "nobody";
  config.settings.apps = {{"api", {"/run/a/0.sock"}}};
  auto decoded = ConfigArgs::decode(config.encode());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->settings.apps, config.settings.apps);
  // Settings without apps read as they did before apps existed (the launch digest of a
  // worker started then stays the same).
  config.settings.apps.clear();
  EXPECT_FALSE(settingsJson(config.settings).contains("apps"));
  ReloadArgs plain{"x = 1", "/etc/a.toml", {}, {}};
  EXPECT_FALSE(plain.encode().contains("apps"));
}

}  // namespace
}  // namespace scalws::ipc
