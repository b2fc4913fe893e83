// [php_pool.NAME]: PHP-FPM pools the php routes run their scripts on.
#include <sys/un.h>

#include "common/config/listen_address.h"
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {
namespace {

constexpr size_t kMaxPoolName = 64;
constexpr int64_t kMaxConns = 65535;
constexpr int64_t kMaxQueue = 1'000'000;

bool isPoolName(std::string_view name) {
  if (name.empty() || name.size() > kMaxPoolName) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// "unix:/path" or "tcp:host:port" with a literal host (no DNS at load or at run time).
void readAddress(TableReader& table, PhpPoolConfig& pool) {
  const ConfigValue* value = table.require("address");
  if (value == nullptr || !table.readString("address", pool.address)) return;
  std::string_view text = pool.address;
  if (text.starts_with("unix:")) {
    std::string_view path = text.substr(5);
    if (path.empty() || path.front() != '/') {
      table.error(*value, "address",
                  "the unix socket path must be absolute, found \"" + std::string(path) + "\"");
    } else if (path.size() >= sizeof(sockaddr_un::sun_path)) {
      table.error(*value, "address",
                  "the unix socket path is longer than " +
                      std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
    } else if (path.find('\0') != std::string_view::npos) {
      table.error(*value, "address", "must not contain NUL");
    } else {
      pool.kind = PhpPoolConfig::Kind::kUnix;
      pool.unix_path = std::string(path);
    }
    return;
  }
  if (text.starts_with("tcp:")) {
    std::string_view hostport = text.substr(4);
    // "localhost" is the one name accepted: it means loopback everywhere, no lookup needed.
    std::string literal(hostport);
    if (hostport.starts_with("localhost:")) literal = "127.0.0.1" + literal.substr(9);
    Result<ListenAddress> parsed = parseListenAddress(literal);
    if (!parsed.ok()) {
      table.error(*value, "address", parsed.status().message());
    } else {
      pool.kind = PhpPoolConfig::Kind::kTcp;
      pool.host = parsed->host;
      pool.port = parsed->port;
    }
    return;
  }
  table.error(
      *value, "address",
      "expected \"unix:/path/to/socket\" or \"tcp:host:port\", found \"" + pool.address + "\"");
}

void readPositiveDuration(TableReader& table, std::string_view key, Milliseconds& out) {
  Milliseconds ms = 0;
  if (!table.readDuration(key, ms)) return;
  if (ms == 0) {
    table.error(*table.get(key), key, "must be greater than zero");
    return;
  }
  out = ms;
}

void parsePool(const ConfigEntry& entry, ParseContext& ctx, SiteConfig& site) {
  std::string path = "php_pool." + entry.key;
  if (!isPoolName(entry.key)) {
    ctx.error(entry.where, "php_pool: \"" + entry.key +
                               "\" is not a pool name (letters, digits, '-', '_', '.'; at most " +
                               std::to_string(kMaxPoolName) + ")");
    return;
  }
  if (!expectType(entry.value, ConfigValue::Type::kTable, path, ctx)) return;
  PhpPoolConfig pool;
  pool.name = entry.key;
  pool.where = entry.value.where;
  TableReader table(entry.value, path, ctx);
  readAddress(table, pool);
  uint32_t max_conns = 0;
  if (table.readInteger("max_conns", 1, kMaxConns, max_conns)) pool.max_conns = max_conns;
  readPositiveDuration(table, "timeout", pool.timeout);
  readPositiveDuration(table, "queue_timeout", pool.queue_timeout);
  table.readInteger("queue", 0, kMaxQueue, pool.queue);
  table.finish();
  site.php_pools.push_back(std::move(pool));
}

}  // namespace

void parsePhpPoolSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!expectType(value, ConfigValue::Type::kTable, "php_pool", ctx)) return;
  // TOML already refuses a table defined twice, so names are unique here.
  for (const ConfigEntry& entry : value.entries) parsePool(entry, ctx, site);
}

void checkPhpPoolReferences(ParseContext& ctx, const SiteConfig& site) {
  for (const RouteConfig& route : site.routes) {
    const auto* php = std::get_if<PhpAction>(&route.action);
    if (php == nullptr || php->pool.empty()) continue;
    bool found = false;
    for (const PhpPoolConfig& pool : site.php_pools) found = found || pool.name == php->pool;
    if (!found) {
      ctx.error(php->where, "route.php.pool: no [php_pool." + php->pool + "] in this config");
    }
  }
}

}  // namespace scalws::common::config
