#include "worker/handlers/proxy/upstream_spec.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstring>

namespace scalws::worker::proxy {

using common::config::UpstreamConfig;
using common::config::UpstreamServerConfig;

namespace {

common::Status fillTcp(const std::string& ip, uint16_t port, ServerSpec& s) {
  auto* sin = reinterpret_cast<sockaddr_in*>(&s.address);
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&s.address);
  if (inet_pton(AF_INET, ip.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    s.address_len = sizeof(sockaddr_in);
    s.text = ip + ":" + std::to_string(port);
    return common::okStatus();
  }
  if (inet_pton(AF_INET6, ip.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    s.address_len = sizeof(sockaddr_in6);
    s.text = "[" + ip + "]:" + std::to_string(port);
    return common::okStatus();
  }
  return common::invalidArgument("\"" + ip + "\" is not an address");
}

}  // namespace

bool UpstreamSpec::sameServers(const UpstreamSpec& other) const {
  if (servers.size() != other.servers.size() || tls != other.tls) return false;
  for (size_t i = 0; i < servers.size(); ++i) {
    const ServerSpec& a = servers[i];
    const ServerSpec& b = other.servers[i];
    if (a.address_len != b.address_len || std::memcmp(&a.address, &b.address, a.address_len) != 0 ||
        a.host_header != b.host_header || a.tls_name != b.tls_name) {
      return false;
    }
  }
  return true;
}

common::Result<std::shared_ptr<const UpstreamSpec>> resolveUpstreamSpec(
    const UpstreamConfig& config) {
  auto spec = std::make_shared<UpstreamSpec>();
  const std::string where = config.where.toString() + ": upstream." + config.name + ": ";
  spec->name = config.name;
  for (const UpstreamServerConfig& server : config.servers) {
    ServerSpec base;
    base.weight = server.weight;
    base.backup = server.backup;
    if (server.kind == UpstreamServerConfig::Kind::kUnix) {
      auto* sun = reinterpret_cast<sockaddr_un*>(&base.address);
      if (server.unix_path.size() >= sizeof(sun->sun_path)) {
        return common::invalidArgument(where + "socket path too long");
      }
      sun->sun_family = AF_UNIX;
      std::memcpy(sun->sun_path, server.unix_path.data(), server.unix_path.size());
      base.address_len =
          static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + server.unix_path.size() + 1);
      base.unix_socket = true;
      base.text = server.address;
      base.host_header = "localhost";
      base.tls_name = "localhost";
      spec->servers.push_back(std::move(base));
      continue;
    }
    bool literal = server.addresses.size() == 1 && server.addresses[0] == server.host;
    base.host_header = server.host.find(':') != std::string::npos
                           ? "[" + server.host + "]:" + std::to_string(server.port)
                           : server.host + ":" + std::to_string(server.port);
    base.tls_name = server.host;
    if (server.addresses.empty()) {
      return common::invalidArgument(where + "\"" + server.host + "\" was not resolved");
    }
    for (const std::string& ip : server.addresses) {
      ServerSpec s = base;
      common::Status filled = fillTcp(ip, server.port, s);
      if (!filled.ok()) return common::invalidArgument(where + filled.message());
      if (!literal) s.text += " (" + server.host + ")";
      spec->servers.push_back(std::move(s));
    }
  }
  if (spec->servers.size() > UpstreamConfig::kMaxServers) {
    return common::invalidArgument(where + "more than " +
                                   std::to_string(UpstreamConfig::kMaxServers) + " addresses");
  }
  spec->balance = config.balance;
  spec->hash_key = config.hash_key;
  if (config.balance == common::config::BalanceMode::kHash) {
    std::vector<HashRing::Member> members;
    for (const ServerSpec& s : spec->servers) {
      // Backups never own keys: they stand in only while no primary can (a weight of 0
      // would still be a member; leaving them out keeps the primaries' keys stable).
      members.push_back(HashRing::Member{s.text, s.backup ? 0u : s.weight});
    }
    spec->ring = HashRing(members);
  }
  spec->keepalive = config.keepalive;
  spec->keepalive_timeout_ms = config.keepalive_timeout;
  spec->keepalive_requests = config.keepalive_requests;
  spec->connect_timeout_ms = config.connect_timeout;
  spec->read_timeout_ms = config.read_timeout;
  spec->send_timeout_ms = config.send_timeout;
  spec->max_fails = config.max_fails;
  spec->fail_timeout_ms = config.fail_timeout;
  spec->retries = config.retries;
  spec->health = config.health;
  if (config.tls) {
    auto tls = UpstreamTlsContext::build(*config.tls, config.name);
    if (!tls.ok())
      return common::invalidArgument(config.where.toString() + ": " + tls.status().message());
    spec->tls = std::move(tls).value();
    if (!config.tls->sni.empty()) {
      for (ServerSpec& s : spec->servers) s.tls_name = config.tls->sni;
    }
  }
  return std::shared_ptr<const UpstreamSpec>(std::move(spec));
}

}  // namespace scalws::worker::proxy
