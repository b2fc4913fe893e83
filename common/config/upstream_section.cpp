// [upstream.NAME]: the servers a proxy route sends requests to, how it balances between
// them, keeps connections, times out and decides a server is down.
#include <sys/un.h>

#include "common/config/host_resolver.h"
#include "common/config/listen_address.h"
#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {
namespace {

constexpr size_t kMaxUpstreamName = 64;
constexpr int64_t kMaxWeight = 1000;
constexpr int64_t kMaxKeepalive = 65535;
constexpr int64_t kMaxRetries = 16;
constexpr int64_t kMaxChecks = 100;

bool isUpstreamName(std::string_view name) {
  if (name.empty() || name.size() > kMaxUpstreamName) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// "unix:/run/api.sock", "127.0.0.1:9000", "[::1]:9000", "backend.internal:8080".
Status parseServerAddress(std::string_view address, UpstreamServerConfig& server) {
  server.address = std::string(address);
  if (address.starts_with("unix:")) {
    std::string_view path = address.substr(5);
    if (path.empty() || path.front() != '/') {
      return invalidArgument("the unix socket path must be absolute, found \"" + std::string(path) +
                             "\"");
    }
    if (path.size() >= sizeof(sockaddr_un::sun_path)) {
      return invalidArgument("the unix socket path is longer than " +
                             std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
    }
    if (path.find('\0') != std::string_view::npos) return invalidArgument("must not contain NUL");
    server.kind = UpstreamServerConfig::Kind::kUnix;
    server.unix_path = std::string(path);
    return Status();
  }
  server.kind = UpstreamServerConfig::Kind::kTcp;
  size_t colon = address.rfind(':');
  bool bracketed = !address.empty() && address.front() == '[';
  std::string_view host = colon == std::string_view::npos ? address : address.substr(0, colon);
  if (!bracketed && colon != std::string_view::npos && isHostName(host)) {
    // A name: the port is checked like a listen address's, the name resolved at the end
    // of the load.
    Result<ListenAddress> port_only =
        parseListenAddress("0.0.0.0" + std::string(address.substr(colon)));
    if (!port_only.ok()) return port_only.status();
    server.host = std::string(host);
    server.port = port_only->port;
    return Status();
  }
  Result<ListenAddress> literal = parseListenAddress(address);
  if (!literal.ok()) {
    return invalidArgument("expected \"host:port\", \"[v6]:port\" or \"unix:/path\", found \"" +
                           std::string(address) + "\" (" + literal.status().message() + ")");
  }
  if (literal->host == "0.0.0.0" || literal->host == "::") {
    return invalidArgument("\"" + std::string(address) + "\" is not an address to connect to");
  }
  server.host = literal->host;
  server.port = literal->port;
  server.addresses = {literal->host};
  return Status();
}

void parseServer(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                 UpstreamConfig& upstream) {
  UpstreamServerConfig server;
  server.where = value.where;
  const ConfigValue* address_value = &value;
  std::string address_path = path;
  if (value.is(ConfigValue::Type::kTable)) {
    TableReader table(value, path, ctx);
    address_value = table.require("address");
    address_path = table.keyPath("address");
    table.readInteger("weight", 1, kMaxWeight, server.weight);
    table.readBool("backup", server.backup);
    table.finish();
    if (address_value == nullptr) return;
  }
  if (!address_value->is(ConfigValue::Type::kString)) {
    ctx.error(address_value->where,
              address_path +
                  ": expected an address string or a table { address = ..., weight "
                  "= ..., backup = ... }, found " +
                  std::string(describeType(address_value->type)));
    return;
  }
  Status parsed = parseServerAddress(address_value->string, server);
  if (!parsed.ok()) {
    ctx.error(address_value->where, address_path + ": " + parsed.message());
    return;
  }
  upstream.servers.push_back(std::move(server));
}

void readServers(TableReader& table, UpstreamConfig& upstream) {
  const ConfigValue* value = table.require("servers");
  if (value == nullptr) return;
  std::string path = table.keyPath("servers");
  ParseContext& ctx = table.context();
  if (!value->is(ConfigValue::Type::kArray) || value->array.empty()) {
    ctx.error(value->where, path + ": expected a non-empty array of servers");
    return;
  }
  for (size_t i = 0; i < value->array.size(); ++i) {
    parseServer(value->array[i], path + "[" + std::to_string(i) + "]", ctx, upstream);
  }
  bool primary = false;
  for (const auto& s : upstream.servers) primary = primary || !s.backup;
  if (!upstream.servers.empty() && !primary) {
    ctx.error(value->where, path + ": every server is a backup; at least one must not be");
  }
}

void readHashKey(TableReader& table, UpstreamConfig& upstream) {
  std::string key;
  if (!table.readString("hash_key", key)) return;
  const ConfigValue& value = *table.get("hash_key");
  if (upstream.balance != BalanceMode::kHash) {
    table.error(value, "hash_key", "only used with balance = \"hash\"");
    return;
  }
  if (key == "client_ip") {
    upstream.hash_key = HashKeyConfig{HashKeyConfig::Kind::kClientIp, ""};
  } else if (key.starts_with("header:") && isHttpToken(key.substr(7))) {
    upstream.hash_key = HashKeyConfig{HashKeyConfig::Kind::kHeader, toLowerAscii(key.substr(7))};
  } else if (key.starts_with("cookie:") && isHttpToken(key.substr(7))) {
    upstream.hash_key = HashKeyConfig{HashKeyConfig::Kind::kCookie, key.substr(7)};
  } else {
    table.error(
        value, "hash_key",
        "expected \"client_ip\", \"header:NAME\" or \"cookie:NAME\", found \"" + key + "\"");
  }
}

// "2xx", "200", "2xx,3xx", "200,204".
bool parseExpect(std::string_view text, HealthCheckConfig& health) {
  std::vector<HealthCheckConfig::StatusRange> ranges;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.size() != 3 || item[0] < '1' || item[0] > '5') return false;
    if (item[1] == 'x' && item[2] == 'x') {
      uint16_t base = static_cast<uint16_t>((item[0] - '0') * 100);
      ranges.push_back({base, static_cast<uint16_t>(base + 99)});
    } else if (item[1] >= '0' && item[1] <= '9' && item[2] >= '0' && item[2] <= '9') {
      uint16_t code =
          static_cast<uint16_t>((item[0] - '0') * 100 + (item[1] - '0') * 10 + (item[2] - '0'));
      ranges.push_back({code, code});
    } else {
      return false;
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (ranges.empty()) return false;
  health.expect = std::move(ranges);
  return true;
}

void readHealth(TableReader& parent, UpstreamConfig& upstream) {
  const ConfigValue* value = parent.get("health");
  if (value == nullptr) return;
  std::string path = parent.keyPath("health");
  ParseContext& ctx = parent.context();
  if (!expectType(*value, ConfigValue::Type::kTable, path, ctx)) return;
  HealthCheckConfig health;
  TableReader table(*value, path, ctx);
  if (table.readString("path", health.path)) {
    if (health.path.empty() || health.path.front() != '/' || !isValidFieldValue(health.path) ||
        health.path.find(' ') != std::string::npos) {
      table.error(*table.get("path"), "path",
                  "must be a path starting with \"/\" without spaces or control characters");
    }
  }
  if (table.readString("host", health.host) && !isHostName(health.host)) {
    table.error(*table.get("host"), "host", "\"" + health.host + "\" is not a host name");
  }
  table.readPositiveDuration("interval", health.interval);
  table.readPositiveDuration("timeout", health.timeout);
  std::string expect;
  if (table.readString("expect", expect)) {
    if (parseExpect(expect, health)) {
      health.expect_text = expect;
    } else {
      table.error(*table.get("expect"), "expect",
                  "expected status codes or classes such as \"2xx\", \"200\" or \"2xx,301\", "
                  "found \"" +
                      expect + "\"");
    }
  }
  table.readInteger("fails", 1, kMaxChecks, health.fails);
  table.readInteger("passes", 1, kMaxChecks, health.passes);
  table.finish();
  upstream.health = std::move(health);
}

void readTls(TableReader& parent, UpstreamConfig& upstream) {
  const ConfigValue* value = parent.get("tls");
  if (value == nullptr) return;
  std::string path = parent.keyPath("tls");
  ParseContext& ctx = parent.context();
  if (!expectType(*value, ConfigValue::Type::kTable, path, ctx)) return;
  UpstreamTlsConfig tls;
  TableReader table(*value, path, ctx);
  table.readBool("verify", tls.verify);
  if (table.readString("ca", tls.ca)) {
    if (tls.ca.empty() || tls.ca.find('\0') != std::string::npos) {
      table.error(*table.get("ca"), "ca", "must be a file path");
    } else {
      tls.ca = ctx.resolvePath(tls.ca);
    }
  }
  if (table.readString("sni", tls.sni) && !isHostName(tls.sni)) {
    table.error(*table.get("sni"), "sni", "\"" + tls.sni + "\" is not a host name");
  }
  table.finish();
  upstream.tls = std::move(tls);
}

void parseUpstream(const ConfigEntry& entry, ParseContext& ctx, SiteConfig& site) {
  std::string path = "upstream." + entry.key;
  if (!isUpstreamName(entry.key)) {
    ctx.error(entry.where, "upstream: \"" + entry.key +
                               "\" is not an upstream name (letters, digits, '-', '_', '.'; at "
                               "most " +
                               std::to_string(kMaxUpstreamName) + ")");
    return;
  }
  if (!expectType(entry.value, ConfigValue::Type::kTable, path, ctx)) return;
  UpstreamConfig upstream;
  upstream.name = entry.key;
  upstream.where = entry.value.where;
  TableReader table(entry.value, path, ctx);
  readServers(table, upstream);
  table.readEnum<BalanceMode>("balance",
                              {{"round_robin", BalanceMode::kRoundRobin},
                               {"least_conn", BalanceMode::kLeastConn},
                               {"hash", BalanceMode::kHash},
                               {"random_two", BalanceMode::kRandomTwo}},
                              upstream.balance);
  readHashKey(table, upstream);
  table.readInteger("keepalive", 0, kMaxKeepalive, upstream.keepalive);
  table.readPositiveDuration("keepalive_timeout", upstream.keepalive_timeout);
  table.readInteger("keepalive_requests", 1, INT32_MAX, upstream.keepalive_requests);
  table.readPositiveDuration("connect_timeout", upstream.connect_timeout);
  table.readPositiveDuration("read_timeout", upstream.read_timeout);
  table.readPositiveDuration("send_timeout", upstream.send_timeout);
  table.readInteger("max_fails", 0, kMaxChecks, upstream.max_fails);
  table.readPositiveDuration("fail_timeout", upstream.fail_timeout);
  table.readInteger("retries", 0, kMaxRetries, upstream.retries);
  readHealth(table, upstream);
  readTls(table, upstream);
  table.finish();
  site.upstreams.push_back(std::move(upstream));
}

}  // namespace

void parseUpstreamSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!expectType(value, ConfigValue::Type::kTable, "upstream", ctx)) return;
  // TOML already refuses a table defined twice, so names are unique here.
  for (const ConfigEntry& entry : value.entries) parseUpstream(entry, ctx, site);
}

void resolveUpstreamHosts(ParseContext& ctx, SiteConfig& site) {
  HostResolver& resolver =
      ctx.options().resolver != nullptr ? *ctx.options().resolver : processResolver();
  for (UpstreamConfig& upstream : site.upstreams) {
    size_t addresses = 0;
    for (size_t i = 0; i < upstream.servers.size(); ++i) {
      UpstreamServerConfig& server = upstream.servers[i];
      if (server.kind == UpstreamServerConfig::Kind::kTcp && server.addresses.empty()) {
        Result<std::vector<std::string>> resolved = resolver.resolve(server.host);
        if (!resolved.ok()) {
          ctx.error(server.where, "upstream." + upstream.name + ".servers[" + std::to_string(i) +
                                      "]: " + resolved.status().message());
          continue;
        }
        server.addresses = std::move(resolved).value();
      }
      addresses += server.kind == UpstreamServerConfig::Kind::kUnix ? 1 : server.addresses.size();
    }
    if (addresses > UpstreamConfig::kMaxServers) {
      ctx.error(upstream.where,
                "upstream." + upstream.name + ".servers: " + std::to_string(addresses) +
                    " addresses; at most " + std::to_string(UpstreamConfig::kMaxServers));
    }
  }
}

void checkUpstreamReferences(ParseContext& ctx, const SiteConfig& site) {
  for (const RouteConfig& route : site.routes) {
    const auto* proxy = std::get_if<ProxyAction>(&route.action);
    if (proxy == nullptr || proxy->upstream.empty()) continue;
    bool found = false;
    for (const UpstreamConfig& u : site.upstreams) found = found || u.name == proxy->upstream;
    if (!found) {
      ctx.error(proxy->where,
                "route.proxy.upstream: no [upstream." + proxy->upstream + "] in this config");
    }
  }
}

}  // namespace scalws::common::config
