#include "controller/apps/app_spec.h"

#include <gtest/gtest.h>

namespace scalws::controller {
namespace {

AppSpec node() {
  AppSpec spec;
  spec.name = "api";
  spec.entry = "/srv/api/server.js";
  spec.processes = 3;
  spec.user = "nobody";
  return spec;
}

AppSpec wsgi() {
  AppSpec spec;
  spec.name = "shop";
  spec.runtime = AppSpec::Runtime::kWsgi;
  spec.target = "shop.wsgi:application";
  spec.dir = "/srv/shop";
  spec.processes = 4;
  spec.user = "www-data";
  return spec;
}

TEST(AppSpecTest, NodeDefaultsItsDirectoryToTheEntrysAndRunsAProcessPerSocket) {
  AppSpec spec = node();
  ASSERT_TRUE(validateAppSpec(spec).ok());
  EXPECT_EQ(spec.dir, "/srv/api");
  EXPECT_EQ(appProcessCount(spec), 3u);
  EXPECT_EQ(appArgv(spec, "/run/a/0.sock"),
            (std::vector<std::string>{"/usr/bin/node", "/srv/api/server.js"}));
  std::vector<std::string> env = appEnv(spec, "/run/a/0.sock", "/run/a/tmp");
  EXPECT_NE(std::find(env.begin(), env.end(), "PORT=/run/a/0.sock"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "TMPDIR=/run/a/tmp"), env.end());
}

TEST(AppSpecTest, PythonRunsOneMasterWithNWorkers) {
  AppSpec spec = wsgi();
  ASSERT_TRUE(validateAppSpec(spec).ok());
  EXPECT_EQ(appProcessCount(spec), 1u);
  std::vector<std::string> argv = appArgv(spec, "/run/s/0.sock");
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[2], "gunicorn");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "unix:/run/s/0.sock"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "4"), argv.end());
  EXPECT_EQ(argv.back(), "shop.wsgi:application");
  spec.runtime = AppSpec::Runtime::kAsgi;
  argv = appArgv(spec, "/run/s/0.sock");
  EXPECT_EQ(argv[2], "uvicorn");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--uds"), argv.end());
}

TEST(AppSpecTest, RoundTripsThroughJson) {
  AppSpec spec = wsgi();
  spec.env = {"A=1", "B=x=y"};
  spec.writable = {"/srv/shop/media"};
  spec.connect = {"db.internal:5432", "127.0.0.1:6379"};
  ASSERT_TRUE(validateAppSpec(spec).ok());
  common::Result<AppSpec> back = parseAppSpec(appSpecJson(spec));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, spec);
  EXPECT_EQ(appConnectPorts(spec), (std::vector<uint16_t>{5432, 6379}));
}

TEST(AppSpecTest, RefusesWhatCannotRun) {
  struct Case {
    const char* what;
    void (*change)(AppSpec&);
  };
  const Case cases[] = {
      {"bad name", [](AppSpec& s) { s.name = "a/b"; }},
      {"relative entry", [](AppSpec& s) { s.entry = "server.js"; }},
      {"root", [](AppSpec& s) { s.user = "root"; }},
      {"no user", [](AppSpec& s) { s.user.clear(); }},
      {"zero processes", [](AppSpec& s) { s.processes = 0; }},
      {"too many", [](AppSpec& s) { s.processes = 100000; }},
      {"env without =", [](AppSpec& s) { s.env = {"A"}; }},
      {"env PORT", [](AppSpec& s) { s.env = {"PORT=1"}; }},
      {"env LD_PRELOAD", [](AppSpec& s) { s.env = {"LD_PRELOAD=/x.so"}; }},
      {"relative writable", [](AppSpec& s) { s.writable = {"data"}; }},
      {"dotdot writable", [](AppSpec& s) { s.writable = {"/srv/../etc"}; }},
      {"port 0", [](AppSpec& s) { s.connect = {"h:0"}; }},
      {"no port", [](AppSpec& s) { s.connect = {"h"}; }},
      {"big port", [](AppSpec& s) { s.connect = {"h:70000"}; }},
      {"wsgi on node", [](AppSpec& s) { s.target = "a:b"; }},
  };
  for (const Case& c : cases) {
    AppSpec spec = node();
    c.change(spec);
    EXPECT_FALSE(validateAppSpec(spec).ok()) << c.what;
  }
  AppSpec py = wsgi();
  py.target = "no_colon";
  EXPECT_FALSE(validateAppSpec(py).ok());
  py = wsgi();
  py.dir.clear();
  EXPECT_FALSE(validateAppSpec(py).ok());
  EXPECT_FALSE(parseAppSpec(ipc::Json{{"name", "x"}, {"runtime", "ruby"}}).ok());
}

}  // namespace
}  // namespace scalws::controller
