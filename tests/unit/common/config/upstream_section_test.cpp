// [upstream.NAME]: servers (literal, named, unix, weighted, backup), balancing, keepalive,
// timeouts, health checks, TLS, and every bad value refused with its position.
#include <gtest/gtest.h>

#include <map>

#include "common/config/host_resolver.h"
#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::errorsOf;
using testing::loadSnippet;
using testing::snippetErrors;
using testing::withListen;

class FakeResolver final : public HostResolver {
 public:
  Result<std::vector<std::string>> resolve(const std::string& host) override {
    ++calls;
    auto it = names.find(host);
    if (it == names.end()) return invalidArgument("cannot resolve \"" + host + "\": unknown");
    return it->second;
  }
  std::map<std::string, std::vector<std::string>> names;
  int calls = 0;
};

UpstreamConfig upstreamOf(const std::string& keys) {
  SiteConfig site = loadSnippet("[upstream.api]\n" + keys + "\n");
  EXPECT_EQ(site.upstreams.size(), 1u);
  return site.upstreams.empty() ? UpstreamConfig{} : site.upstreams[0];
}

TEST(UpstreamSection, LiteralServersAndDefaults) {
  UpstreamConfig u = upstreamOf("servers = [\"127.0.0.1:9000\", \"[::1]:9001\"]");
  EXPECT_EQ(u.name, "api");
  ASSERT_EQ(u.servers.size(), 2u);
  EXPECT_EQ(u.servers[0].kind, UpstreamServerConfig::Kind::kTcp);
  EXPECT_EQ(u.servers[0].host, "127.0.0.1");
  EXPECT_EQ(u.servers[0].port, 9000);
  EXPECT_EQ(u.servers[0].addresses, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(u.servers[0].weight, 1u);
  EXPECT_FALSE(u.servers[0].backup);
  EXPECT_EQ(u.servers[1].addresses, std::vector<std::string>{"::1"});
  EXPECT_EQ(u.servers[1].address, "[::1]:9001");
  EXPECT_EQ(u.balance, BalanceMode::kRoundRobin);
  EXPECT_EQ(u.keepalive, 32u);
  EXPECT_EQ(u.keepalive_timeout, 60'000u);
  EXPECT_EQ(u.keepalive_requests, 10'000u);
  EXPECT_EQ(u.connect_timeout, 5'000u);
  EXPECT_EQ(u.read_timeout, 60'000u);
  EXPECT_EQ(u.send_timeout, 60'000u);
  EXPECT_EQ(u.max_fails, 3u);
  EXPECT_EQ(u.fail_timeout, 10'000u);
  EXPECT_EQ(u.retries, 1u);
  EXPECT_FALSE(u.health.has_value());
  EXPECT_FALSE(u.tls.has_value());
}

TEST(UpstreamSection, EveryKeyOfTheExample) {
  FakeResolver resolver;
  resolver.names["backend.internal"] = {"10.1.0.1", "10.1.0.2"};
  LoadOptions options;
  options.resolver = &resolver;
  Result<SiteConfig> site = loadSiteConfigString(withListen(R"(
[upstream.api]
servers = ["127.0.0.1:9000", { address = "10.0.0.7:9000", weight = 3 },
           { address = "unix:/run/api.sock", backup = true }, "backend.internal:8080"]
balance = "hash"
hash_key = "header:X-User"
keepalive = 8
keepalive_timeout = "30s"
keepalive_requests = 100
connect_timeout = "1s"
read_timeout = "2s"
send_timeout = "3s"
max_fails = 5
fail_timeout = "7s"
retries = 2
health = { path = "/healthz", interval = "500ms", timeout = "250ms", expect = "2xx,301", fails = 4, passes = 1, host = "api.internal" }
tls = { verify = false, ca = "ca.pem", sni = "api.internal" }
)"),
                                                 "/etc/scalws/t.toml", options);
  ASSERT_TRUE(site.ok()) << site.status().message();
  const UpstreamConfig& u = site->upstreams.at(0);
  ASSERT_EQ(u.servers.size(), 4u);
  EXPECT_EQ(u.servers[1].weight, 3u);
  EXPECT_EQ(u.servers[2].kind, UpstreamServerConfig::Kind::kUnix);
  EXPECT_EQ(u.servers[2].unix_path, "/run/api.sock");
  EXPECT_TRUE(u.servers[2].backup);
  EXPECT_EQ(u.servers[3].host, "backend.internal");
  EXPECT_EQ(u.servers[3].port, 8080);
  EXPECT_EQ(u.servers[3].addresses, (std::vector<std::string>{"10.1.0.1", "10.1.0.2"}));
  EXPECT_EQ(resolver.calls, 1);  // literal addresses never reach the resolver
  EXPECT_EQ(u.balance, BalanceMode::kHash);
  EXPECT_EQ(u.hash_key.kind, HashKeyConfig::Kind::kHeader);
  EXPECT_EQ(u.hash_key.name, "x-user");
  EXPECT_EQ(u.keepalive, 8u);
  EXPECT_EQ(u.keepalive_timeout, 30'000u);
  EXPECT_EQ(u.keepalive_requests, 100u);
  EXPECT_EQ(u.connect_timeout, 1'000u);
  EXPECT_EQ(u.read_timeout, 2'000u);
  EXPECT_EQ(u.send_timeout, 3'000u);
  EXPECT_EQ(u.max_fails, 5u);
  EXPECT_EQ(u.fail_timeout, 7'000u);
  EXPECT_EQ(u.retries, 2u);
  ASSERT_TRUE(u.health.has_value());
  EXPECT_EQ(u.health->path, "/healthz");
  EXPECT_EQ(u.health->host, "api.internal");
  EXPECT_EQ(u.health->interval, 500u);
  EXPECT_EQ(u.health->timeout, 250u);
  ASSERT_EQ(u.health->expect.size(), 2u);
  EXPECT_EQ(u.health->expect[0].first, 200);
  EXPECT_EQ(u.health->expect[0].last, 299);
  EXPECT_EQ(u.health->expect[1].first, 301);
  EXPECT_EQ(u.health->expect[1].last, 301);
  EXPECT_EQ(u.health->fails, 4u);
  EXPECT_EQ(u.health->passes, 1u);
  ASSERT_TRUE(u.tls.has_value());
  EXPECT_FALSE(u.tls->verify);
  EXPECT_EQ(u.tls->ca, "/etc/scalws/ca.pem");
  EXPECT_EQ(u.tls->sni, "api.internal");
}

TEST(UpstreamSection, BalanceModesAndHashKeys) {
  EXPECT_EQ(upstreamOf("servers = [\"127.0.0.1:1\"]\nbalance = \"least_conn\"").balance,
            BalanceMode::kLeastConn);
  EXPECT_EQ(upstreamOf("servers = [\"127.0.0.1:1\"]\nbalance = \"random_two\"").balance,
            BalanceMode::kRandomTwo);
  UpstreamConfig hashed = upstreamOf("servers = [\"127.0.0.1:1\"]\nbalance = \"hash\"");
  EXPECT_EQ(hashed.hash_key.kind, HashKeyConfig::Kind::kClientIp);
  UpstreamConfig cookie =
      upstreamOf("servers = [\"127.0.0.1:1\"]\nbalance = \"hash\"\nhash_key = \"cookie:sid\"");
  EXPECT_EQ(cookie.hash_key.kind, HashKeyConfig::Kind::kCookie);
  EXPECT_EQ(cookie.hash_key.name, "sid");
}

TEST(UpstreamSection, RefusesBadServers) {
  EXPECT_EQ(snippetErrors("[upstream.api]\n"),
            "t.toml:1:1: upstream.api: missing required key \"servers\"");
  EXPECT_EQ(snippetErrors("[upstream.api]\nservers = []\n"),
            "t.toml:2:11: upstream.api.servers: expected a non-empty array of servers");
  EXPECT_EQ(snippetErrors("[upstream.api]\nservers = [\"127.0.0.1\"]\n"),
            "t.toml:2:12: upstream.api.servers[0]: expected \"host:port\", \"[v6]:port\" or "
            "\"unix:/path\", found \"127.0.0.1\" (address \"127.0.0.1\" has no port (expected "
            "\"host:port\", e.g. \"127.0.0.1:8080\" or \"[::]:8443\"))");
  EXPECT_EQ(snippetErrors("[upstream.api]\nservers = [\"127.0.0.1:0\"]\n"),
            "t.toml:2:12: upstream.api.servers[0]: expected \"host:port\", \"[v6]:port\" or "
            "\"unix:/path\", found \"127.0.0.1:0\" (port must be between 1 and 65535, found "
            "\"0\")");
  EXPECT_EQ(snippetErrors("[upstream.api]\nservers = [\"a.example:99999\"]\n"),
            "t.toml:2:12: upstream.api.servers[0]: port must be between 1 and 65535, found "
            "\"99999\"");
  EXPECT_EQ(snippetErrors("[upstream.api]\nservers = [\"0.0.0.0:80\"]\n"),
            "t.toml:2:12: upstream.api.servers[0]: \"0.0.0.0:80\" is not an address to connect to");
  EXPECT_EQ(snippetErrors("[upstream.api]\nservers = [\"unix:run/a.sock\"]\n"),
            "t.toml:2:12: upstream.api.servers[0]: the unix socket path must be absolute, found "
            "\"run/a.sock\"");
  EXPECT_EQ(
      snippetErrors("[upstream.api]\nservers = [{ address = \"127.0.0.1:1\", weight = 0 }]\n"),
      "t.toml:2:48: upstream.api.servers[0].weight: must be between 1 and 1000, found 0");
  EXPECT_EQ(snippetErrors("[upstream.api]\nservers = [{ weight = 2 }]\n"),
            "t.toml:2:12: upstream.api.servers[0]: missing required key \"address\"");
  EXPECT_EQ(
      snippetErrors("[upstream.api]\nservers = [{ address = \"127.0.0.1:1\", backup = true }]\n"),
      "t.toml:2:11: upstream.api.servers: every server is a backup; at least one must not "
      "be");
  EXPECT_EQ(snippetErrors("[upstream.api]\nservers = [3]\n"),
            "t.toml:2:12: upstream.api.servers[0]: expected an address string or a table { "
            "address = ..., weight = ..., backup = ... }, found an integer");
  EXPECT_NE(snippetErrors("[upstream.api]\nservers = [{ address = \"127.0.0.1:1\", wieght = 2 }]\n")
                .find("unknown key \"wieght\" (did you mean \"weight\"?)"),
            std::string::npos);
}

TEST(UpstreamSection, HostNamesAreResolvedAtLoad) {
  FakeResolver resolver;
  resolver.names["many.internal"] = {"10.0.0.1", "10.0.0.2", "::1"};
  LoadOptions options;
  options.resolver = &resolver;
  Result<SiteConfig> site = loadSiteConfigString(
      withListen("[upstream.api]\nservers = [\"many.internal:80\"]\n"), "t.toml", options);
  ASSERT_TRUE(site.ok()) << site.status().message();
  EXPECT_EQ(site->upstreams[0].servers[0].addresses.size(), 3u);
  EXPECT_EQ(errorsOf(withListen("[upstream.api]\nservers = [\"127.0.0.1:1\", "
                                "\"nowhere.internal:80\"]\n"),
                     options),
            "t.toml:2:27: upstream.api.servers[1]: cannot resolve \"nowhere.internal\": unknown");
  // The real resolver: localhost has an address on any machine these tests run on.
  UpstreamConfig local = upstreamOf("servers = [\"localhost:8080\"]");
  EXPECT_FALSE(local.servers.at(0).addresses.empty());
}

TEST(UpstreamSection, TooManyAddresses) {
  FakeResolver resolver;
  std::vector<std::string> addresses;
  for (int i = 0; i < 65; ++i) addresses.push_back("10.0.1." + std::to_string(i));
  resolver.names["wide.internal"] = addresses;
  LoadOptions options;
  options.resolver = &resolver;
  EXPECT_EQ(errorsOf(withListen("[upstream.api]\nservers = [\"wide.internal:80\"]\n"), options),
            "t.toml:1:1: upstream.api.servers: 65 addresses; at most 64");
}

TEST(UpstreamSection, RefusesBadSettings) {
  const std::string head = "[upstream.api]\nservers = [\"127.0.0.1:1\"]\n";
  EXPECT_EQ(snippetErrors(head + "balance = \"fastest\"\n"),
            "t.toml:3:11: upstream.api.balance: unknown value \"fastest\" (expected "
            "\"round_robin\", \"least_conn\", \"hash\" or \"random_two\")");
  EXPECT_EQ(snippetErrors(head + "hash_key = \"client_ip\"\n"),
            "t.toml:3:12: upstream.api.hash_key: only used with balance = \"hash\"");
  EXPECT_EQ(snippetErrors(head + "balance = \"hash\"\nhash_key = \"query:x\"\n"),
            "t.toml:4:12: upstream.api.hash_key: expected \"client_ip\", \"header:NAME\" or "
            "\"cookie:NAME\", found \"query:x\"");
  EXPECT_EQ(snippetErrors(head + "keepalive = -1\n"),
            "t.toml:3:13: upstream.api.keepalive: must be between 0 and 65535, found -1");
  EXPECT_EQ(snippetErrors(head + "keepalive_requests = 0\n"),
            "t.toml:3:22: upstream.api.keepalive_requests: must be between 1 and 2147483647, "
            "found 0");
  EXPECT_EQ(snippetErrors(head + "connect_timeout = \"0s\"\n"),
            "t.toml:3:19: upstream.api.connect_timeout: must be greater than zero");
  EXPECT_EQ(snippetErrors(head + "read_timeout = \"1x\"\n").substr(0, 40),
            "t.toml:3:16: upstream.api.read_timeout: ");
  EXPECT_EQ(snippetErrors(head + "retries = 17\n"),
            "t.toml:3:11: upstream.api.retries: must be between 0 and 16, found 17");
  EXPECT_EQ(snippetErrors(head + "health = { path = \"healthz\" }\n"),
            "t.toml:3:19: upstream.api.health.path: must be a path starting with \"/\" without "
            "spaces or control characters");
  EXPECT_EQ(snippetErrors(head + "health = { expect = \"ok\" }\n"),
            "t.toml:3:21: upstream.api.health.expect: expected status codes or classes such as "
            "\"2xx\", \"200\" or \"2xx,301\", found \"ok\"");
  EXPECT_EQ(snippetErrors(head + "health = { passes = 0 }\n"),
            "t.toml:3:21: upstream.api.health.passes: must be between 1 and 100, found 0");
  EXPECT_EQ(snippetErrors(head + "tls = { sni = \"a b\" }\n"),
            "t.toml:3:15: upstream.api.tls.sni: \"a b\" is not a host name");
  EXPECT_EQ(snippetErrors("[upstream.\"a b\"]\nservers = [\"127.0.0.1:1\"]\n"),
            "t.toml:1:11: upstream: \"a b\" is not an upstream name (letters, digits, '-', '_', "
            "'.'; at most 64)");
}

TEST(HostName, AcceptsNamesOnly) {
  EXPECT_TRUE(isHostName("localhost"));
  EXPECT_TRUE(isHostName("api-1.internal"));
  EXPECT_TRUE(isHostName("example.com."));
  EXPECT_FALSE(isHostName(""));
  EXPECT_FALSE(isHostName("127.0.0.1"));
  EXPECT_FALSE(isHostName("-a.example"));
  EXPECT_FALSE(isHostName("a-.example"));
  EXPECT_FALSE(isHostName("a..example"));
  EXPECT_FALSE(isHostName("a_b.example"));
  EXPECT_FALSE(isHostName(std::string(64, 'a') + ".example"));
}

}  // namespace
}  // namespace scalws::common::config
