#include "controller/instances/instance_config.h"

#include <gtest/gtest.h>

namespace scalws::controller {
namespace {

common::config::SiteConfig load(const std::string& listens) {
  std::string text;
  for (size_t start = 0; start < listens.size();) {
    size_t comma = listens.find(',', start);
    std::string a = listens.substr(start, comma == std::string::npos ? comma : comma - start);
    text += "[[listen]]\naddress = \"" + a + "\"\n";
    start = comma == std::string::npos ? listens.size() : comma + 1;
  }
  text += "[[route]]\nrespond = { body = \"x\" }\n";
  auto site = loadInstanceConfig(text, "/etc/scalws/t.toml");
  EXPECT_TRUE(site.ok()) << site.status().message();
  return site.ok() ? *site : common::config::SiteConfig();
}

TEST(InstanceConfigTest, ControllerKeysOfServerAreRefused) {
  auto site = loadInstanceConfig("[server]\nworkers = 2\n[[listen]]\naddress = \"127.0.0.1:1\"\n",
                                 "/etc/scalws/a.toml");
  ASSERT_FALSE(site.ok());
  EXPECT_EQ(site.status().message(),
            "/etc/scalws/a.toml:2:11: server.workers: set by the controller (scalwsctl instance "
            "add --cpus (one worker per CPU) and --mode)");
}

TEST(InstanceConfigTest, SiteKeysOfServerLoad) {
  auto site = loadInstanceConfig(
      "[server]\nmax_body = 10\nheader_timeout = \"1s\"\n[[listen]]\naddress = "
      "\"127.0.0.1:1\"\n",
      "/etc/scalws/a.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  EXPECT_EQ(site->server->max_body, 10u);
  EXPECT_EQ(site->server->header_timeout, 1000u);
}

TEST(InstanceConfigTest, CachesAreAllowed) {
  const char* text =
      "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nmatch = { prefix = \"/\" }\n"
      "proxy = { upstream = \"app\", cache = \"pages\" }\n[upstream.app]\n"
      "servers = [\"127.0.0.1:2\"]\n[cache.pages]\nmemory = \"1m\"\n";
  auto site = loadInstanceConfig(text, "/etc/scalws/a.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  ASSERT_EQ(site->caches.size(), 1u);
  EXPECT_EQ(site->caches[0].name, "pages");
}

TEST(InstanceConfigTest, OverlapRules) {
  EXPECT_EQ(listenOverlap(load("127.0.0.1:80"), load("127.0.0.1:80")), "127.0.0.1:80");
  EXPECT_EQ(listenOverlap(load("127.0.0.1:80"), load("0.0.0.0:80")), "127.0.0.1:80");
  EXPECT_EQ(listenOverlap(load("0.0.0.0:80"), load("10.0.0.1:80")), "0.0.0.0:80");
  EXPECT_EQ(listenOverlap(load("[::]:80"), load("[::1]:80")), "[::]:80");
  EXPECT_EQ(listenOverlap(load("127.0.0.1:80"), load("127.0.0.1:81")), std::nullopt);
  EXPECT_EQ(listenOverlap(load("127.0.0.1:80"), load("127.0.0.2:80")), std::nullopt);
  // IPv6 sockets are v6-only: they never clash with IPv4 ones.
  EXPECT_EQ(listenOverlap(load("0.0.0.0:80"), load("[::]:80")), std::nullopt);
  EXPECT_EQ(listenOverlap(load("127.0.0.1:81,127.0.0.1:80"), load("127.0.0.1:80")), "127.0.0.1:80");
}

TEST(InstanceConfigTest, SameListenAddresses) {
  EXPECT_TRUE(
      sameListenAddresses(load("127.0.0.1:80,127.0.0.1:81"), load("127.0.0.1:80,127.0.0.1:81")));
  EXPECT_FALSE(sameListenAddresses(load("127.0.0.1:80"), load("127.0.0.1:80,127.0.0.1:81")));
  EXPECT_FALSE(sameListenAddresses(load("127.0.0.1:80"), load("127.0.0.1:81")));
}

TEST(InstanceConfigTest, Summary) {
  ipc::Json s = configSummary(load("127.0.0.1:80,[::1]:81"));
  EXPECT_EQ(s["listen"], ipc::Json({"127.0.0.1:80", "[::1]:81"}));
  EXPECT_EQ(s["routes"], 1);
}

}  // namespace
}  // namespace scalws::controller
