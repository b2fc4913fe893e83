// An [upstream] resolved for the worker: one server per address, Host and TLS names, the
// ring, and what a reload may keep.
#include "worker/handlers/proxy/upstream_spec.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

namespace scalws::worker::proxy {
namespace {

using common::config::UpstreamConfig;
using common::config::UpstreamServerConfig;

UpstreamServerConfig tcp(std::string host, uint16_t port, std::vector<std::string> addresses) {
  UpstreamServerConfig s;
  s.kind = UpstreamServerConfig::Kind::kTcp;
  s.host = std::move(host);
  s.port = port;
  s.addresses = std::move(addresses);
  s.address = s.host + ":" + std::to_string(port);
  return s;
}

TEST(UpstreamSpec, OneServerPerAddress) {
  UpstreamConfig c;
  c.name = "api";
  c.servers.push_back(tcp("127.0.0.1", 9000, {"127.0.0.1"}));
  c.servers.push_back(tcp("backend.internal", 8080, {"10.0.0.1", "::1"}));
  UpstreamServerConfig unix_server;
  unix_server.kind = UpstreamServerConfig::Kind::kUnix;
  unix_server.unix_path = "/run/api.sock";
  unix_server.address = "unix:/run/api.sock";
  unix_server.backup = true;
  c.servers.push_back(unix_server);
  auto spec = resolveUpstreamSpec(c);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const auto& servers = (*spec)->servers;
  ASSERT_EQ(servers.size(), 4u);
  EXPECT_EQ(servers[0].text, "127.0.0.1:9000");
  EXPECT_EQ(servers[0].host_header, "127.0.0.1:9000");
  EXPECT_EQ(servers[1].text, "10.0.0.1:8080 (backend.internal)");
  EXPECT_EQ(servers[1].host_header, "backend.internal:8080");
  EXPECT_EQ(servers[1].tls_name, "backend.internal");
  EXPECT_EQ(servers[2].text, "[::1]:8080 (backend.internal)");
  EXPECT_EQ(servers[2].address.ss_family, AF_INET6);
  const auto* sin = reinterpret_cast<const sockaddr_in*>(&servers[1].address);
  EXPECT_EQ(ntohs(sin->sin_port), 8080);
  EXPECT_TRUE(servers[3].unix_socket);
  EXPECT_TRUE(servers[3].backup);
  EXPECT_EQ(servers[3].host_header, "localhost");
  EXPECT_TRUE((*spec)->ring.empty());  // round robin needs no ring
}

TEST(UpstreamSpec, SameServersDecidesWhatAReloadKeeps) {
  UpstreamConfig c;
  c.name = "api";
  c.servers.push_back(tcp("127.0.0.1", 9000, {"127.0.0.1"}));
  auto a = resolveUpstreamSpec(c);
  c.keepalive = 4;
  c.read_timeout = 1;
  auto b = resolveUpstreamSpec(c);
  c.servers[0].port = 9001;
  auto moved = resolveUpstreamSpec(c);
  ASSERT_TRUE(a.ok() && b.ok() && moved.ok());
  EXPECT_TRUE((*a)->sameServers(**b));
  EXPECT_FALSE((*a)->sameServers(**moved));
}

TEST(UpstreamSpec, TlsWithAMissingCaIsRefused) {
  UpstreamConfig c;
  c.name = "api";
  c.servers.push_back(tcp("127.0.0.1", 443, {"127.0.0.1"}));
  common::config::UpstreamTlsConfig tls;
  tls.ca = "/nonexistent/ca.pem";
  c.tls = tls;
  auto spec = resolveUpstreamSpec(c);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("cannot load the CA bundle \"/nonexistent/ca.pem\""),
            std::string::npos);
  tls.verify = false;
  c.tls = tls;
  EXPECT_TRUE(resolveUpstreamSpec(c).ok());
}

}  // namespace
}  // namespace scalws::worker::proxy
