// [real_ip], listen.proxy_protocol and server.temp_dir: the real client address settings.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

TEST(RealIpSection, TrustedRangesAndHeader) {
  SiteConfig site =
      loadSnippet("[real_ip]\nfrom = [\"10.0.0.0/8\", \"::1\"]\nheader = \"X-Real-IP\"\n");
  ASSERT_TRUE(site.real_ip.has_value());
  ASSERT_EQ(site.real_ip->from.size(), 2u);
  EXPECT_EQ(site.real_ip->from[0].text, "10.0.0.0/8");
  EXPECT_TRUE(site.real_ip->from[1].v6);
  EXPECT_EQ(site.real_ip->header, "x-real-ip");
  SiteConfig defaults = loadSnippet("real_ip = { from = \"127.0.0.1\" }\n");
  ASSERT_TRUE(defaults.real_ip.has_value());
  EXPECT_EQ(defaults.real_ip->header, "x-forwarded-for");
  EXPECT_FALSE(loadSnippet("").real_ip.has_value());
}

TEST(RealIpSection, Refusals) {
  EXPECT_EQ(snippetErrors("[real_ip]\nheader = \"x-forwarded-for\"\n"),
            "t.toml:1:1: real_ip: missing required key \"from\"");
  EXPECT_EQ(snippetErrors("[real_ip]\nfrom = []\n"),
            "t.toml:2:8: real_ip.from: must name at least one trusted address or range");
  EXPECT_EQ(snippetErrors("[real_ip]\nfrom = [\"10.0.0.1/8\"]\n"),
            "t.toml:2:9: real_ip.from[0]: \"10.0.0.1/8\" has bits set past the prefix length "
            "(did you mean \"10.0.0.0/8\"?)");
  EXPECT_EQ(snippetErrors("[real_ip]\nfrom = [\"10.0.0.0/8\"]\nheader = \"x forwarded\"\n"),
            "t.toml:3:10: real_ip.header: \"x forwarded\" is not a header name");
}

TEST(ListenProxyProtocol, OffUnlessAsked) {
  Result<SiteConfig> site = loadSiteConfigString(
      "[[listen]]\naddress = \"127.0.0.1:8080\"\n"
      "[[listen]]\naddress = \"127.0.0.1:8443\"\nproxy_protocol = true\n",
      "t.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  EXPECT_FALSE(site->listens[0].proxy_protocol);
  EXPECT_TRUE(site->listens[1].proxy_protocol);
  EXPECT_EQ(testing::errorsOf("[[listen]]\naddress = \"127.0.0.1:8080\"\nproxy_protocol = 1\n"),
            "t.toml:3:18: listen.proxy_protocol: expected a boolean, found an integer");
}

TEST(ServerTempDir, DefaultAndRelative) {
  SiteConfig defaults = loadSnippet("[server]\n");
  ASSERT_TRUE(defaults.server.has_value());
  EXPECT_EQ(defaults.server->temp_dir, "/var/tmp");
  SiteConfig relative = loadSnippet("[server]\ntemp_dir = \"body-tmp/\"\n");
  EXPECT_EQ(relative.server->temp_dir, "/etc/scalws/body-tmp");
  EXPECT_EQ(snippetErrors("[server]\ntemp_dir = \"\"\n"),
            "t.toml:2:12: server.temp_dir: must name a directory");
}

}  // namespace
}  // namespace scalws::common::config
