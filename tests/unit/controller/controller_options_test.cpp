#include "controller/controller_options.h"

#include <gtest/gtest.h>

namespace scalws::controller {
namespace {

using common::StatusCode;

TEST(ControllerOptionsTest, DefaultsAreTheIssuesPaths) {
  auto o = parseControllerArgs({});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->state_dir, "/var/lib/scalws");
  EXPECT_EQ(o->socket_path, "/run/scalws/control.sock");
  EXPECT_EQ(o->reserve_cpus, "");
  EXPECT_EQ(o->restart.crash_limit, RestartLimits().crash_limit);
  EXPECT_EQ(o->pool_dir, "/run/scalws/php");
  EXPECT_EQ(o->php_fpm, "/usr/sbin/php-fpm8.2");
}

TEST(ControllerOptionsTest, ManagedPoolFlags) {
  auto o = parseControllerArgs({"--pool-dir", "/run/x/php", "--php-fpm", "/opt/php/php-fpm"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->pool_dir, "/run/x/php");
  EXPECT_EQ(o->php_fpm, "/opt/php/php-fpm");
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--pool-dir"}, {"--pool-dir", "run/php"}, {"--php-fpm", "php-fpm8.2"}}) {
    EXPECT_EQ(parseControllerArgs(bad).status().code(), StatusCode::kInvalidArgument) << bad[0];
  }
}

TEST(ControllerOptionsTest, PoolLogSize) {
  EXPECT_EQ(parseControllerArgs({})->pool_log_size, 4u * 1024 * 1024);
  auto o = parseControllerArgs({"--pool-log-size", "512K"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->pool_log_size, 512u * 1024);
  for (const char* bad : {"1K", "x", "-1", ""}) {
    EXPECT_EQ(parseControllerArgs({"--pool-log-size", bad}).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ControllerOptionsTest, AppLogSize) {
  EXPECT_EQ(parseControllerArgs({})->app_log_size, 16u * 1024 * 1024);
  auto o = parseControllerArgs({"--app-log-size", "64K"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->app_log_size, 64u * 1024);
  EXPECT_EQ(o->pool_log_size, 4u * 1024 * 1024);
  for (const char* bad : {"63K", "x", ""}) {
    EXPECT_EQ(parseControllerArgs({"--app-log-size", bad}).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ControllerOptionsTest, EveryFlag) {
  auto o =
      parseControllerArgs({"--state-dir", "/s", "--socket", "/r/c.sock", "--reserve-cpus", "0,2-3",
                           "--scalwsd", "/bin/w", "--crash-limit", "3", "--crash-window", "20"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->state_dir, "/s");
  EXPECT_EQ(o->socket_path, "/r/c.sock");
  EXPECT_EQ(o->reserve_cpus, "0,2-3");
  EXPECT_EQ(o->scalwsd, "/bin/w");
  EXPECT_EQ(o->restart.crash_limit, 3u);
  EXPECT_EQ(o->restart.crash_window_ms, 20'000u);
}

TEST(ControllerOptionsTest, UsageErrors) {
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--state-dir"},
                                             {"--state-dir", ""},
                                             {"--reserve-cpus", "3-1"},
                                             {"--crash-limit", "0"},
                                             {"--crash-limit", "x"},
                                             {"--crash-window", "-5"},
                                             {"--bogus"},
                                             {"extra"}}) {
    auto o = parseControllerArgs(bad);
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument) << bad[0];
  }
}

TEST(ControllerOptionsTest, MetricsListenIsOffByDefaultAndALiteralAddress) {
  EXPECT_EQ(parseControllerArgs({})->metrics_listen, "");
  EXPECT_EQ(parseControllerArgs({"--metrics-listen", "127.0.0.1:9145"})->metrics_listen,
            "127.0.0.1:9145");
  EXPECT_EQ(parseControllerArgs({"--metrics-listen", "[::1]:9145"})->metrics_listen, "[::1]:9145");
  for (const char* bad : {"localhost:9145", "127.0.0.1", "127.0.0.1:0", ""}) {
    EXPECT_EQ(parseControllerArgs({"--metrics-listen", bad}).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_NE(std::string(kControllerUsage).find("--metrics-listen ADDR"), std::string::npos);
}

TEST(ControllerOptionsTest, DashboardOffByDefaultLoopbackUnlessCredentialsAreGiven) {
  EXPECT_EQ(parseControllerArgs({})->dashboard_listen, "");
  for (const char* loopback : {"127.0.0.1:9146", "127.1.2.3:9146", "[::1]:9146"}) {
    auto o = parseControllerArgs({"--dashboard-listen", loopback});
    ASSERT_TRUE(o.ok()) << loopback << ": " << o.status().message();
    EXPECT_EQ(o->dashboard_listen, loopback);
    EXPECT_EQ(o->dashboard_auth, "");
  }
  for (const char* open : {"0.0.0.0:9146", "*:9146", "[::]:9146", "192.0.2.1:9146"}) {
    auto o = parseControllerArgs({"--dashboard-listen", open});
    ASSERT_EQ(o.status().code(), StatusCode::kInvalidArgument) << open;
    EXPECT_NE(o.status().message().find("--dashboard-auth"), std::string::npos);
    o = parseControllerArgs({"--dashboard-listen", open, "--dashboard-auth", "/etc/scalws/users"});
    ASSERT_TRUE(o.ok()) << open;
    EXPECT_EQ(o->dashboard_auth, "/etc/scalws/users");
  }
  EXPECT_FALSE(parseControllerArgs({"--dashboard-auth", "/etc/scalws/users"}).ok());
  EXPECT_FALSE(
      parseControllerArgs({"--dashboard-listen", "127.0.0.1:1", "--dashboard-auth", "users"}).ok());
  EXPECT_FALSE(parseControllerArgs({"--dashboard-listen", "localhost:9146"}).ok());
  EXPECT_NE(std::string(kControllerUsage).find("--dashboard-listen ADDR"), std::string::npos);
}

TEST(ControllerOptionsTest, HelpAndVersion) {
  EXPECT_TRUE(parseControllerArgs({"--help"})->help);
  EXPECT_TRUE(parseControllerArgs({"--version"})->version);
}

}  // namespace
}  // namespace scalws::controller
