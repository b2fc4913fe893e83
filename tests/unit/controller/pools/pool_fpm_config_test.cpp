// The php-fpm.conf the controller writes for a managed pool.
#include "controller/pools/pool_fpm_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller {
namespace {

FpmConfig shop() {
  FpmConfig c;
  c.pool = "shop";
  c.user = "shop";
  c.group = "shop";
  c.socket_path = "/run/scalws/php/shop.sock";
  c.socket_group = "www-data";
  c.processes = 6;
  c.pid_path = "/var/lib/scalws/pools/shop/php-fpm.pid";
  c.log_path = "/var/lib/scalws/pools/shop/php-fpm.log";
  return c;
}

bool hasLine(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l == line) return true;
  }
  return false;
}

TEST(PoolFpmConfigTest, ForegroundStaticPoolOnAGroupSocket) {
  auto text = renderFpmConfig(shop());
  ASSERT_TRUE(text.ok()) << text.status().message();
  for (const char* line : {
           "[global]",
           "pid = \"/var/lib/scalws/pools/shop/php-fpm.pid\"",
           "error_log = \"/var/lib/scalws/pools/shop/php-fpm.log\"",
           "daemonize = no",
           "[shop]",
           "user = \"shop\"",
           "group = \"shop\"",
           "listen = \"/run/scalws/php/shop.sock\"",
           "listen.owner = \"shop\"",
           "listen.group = \"www-data\"",
           "listen.mode = 0660",
           "pm = static",
           "pm.max_children = 6",
           "clear_env = yes",
       }) {
    EXPECT_TRUE(hasLine(*text, line)) << "missing: " << line << "\n" << *text;
  }
  // The global section comes first: php-fpm reads pool directives only in a pool section.
  EXPECT_LT(text->find("[global]"), text->find("[shop]"));
}

TEST(PoolFpmConfigTest, RefusesWhatTheIniCannotCarry) {
  for (auto mutate : std::vector<void (*)(FpmConfig&)>{
           [](FpmConfig& c) { c.user = "a\"b"; },
           [](FpmConfig& c) { c.socket_path = "/run/${HOME}.sock"; },
           [](FpmConfig& c) { c.log_path = "/var/log/x\nlisten = 0.0.0.0:9000"; },
           [](FpmConfig& c) { c.socket_group = "a\\b"; },
           [](FpmConfig& c) { c.group = ""; },
           [](FpmConfig& c) { c.pool = "global"; },
           [](FpmConfig& c) { c.processes = 0; },
       }) {
    FpmConfig c = shop();
    mutate(c);
    auto text = renderFpmConfig(c);
    EXPECT_FALSE(text.ok()) << (text.ok() ? *text : "");
  }
}

TEST(PoolFpmConfigTest, WritesAtomicallyForRootOnly) {
  scalws::testing::TempDir dir;
  std::string path = dir.file("php-fpm.conf");
  ASSERT_TRUE(writeFileAtomically(path, "one\n").ok());
  ASSERT_TRUE(writeFileAtomically(path, "two\n").ok());
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "two\n");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_NE(::access((path + ".tmp").c_str(), F_OK), 0);
  EXPECT_FALSE(writeFileAtomically(dir.file("missing/dir/x.conf"), "x").ok());
}

}  // namespace
}  // namespace scalws::controller
