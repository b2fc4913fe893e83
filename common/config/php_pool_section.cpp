// [php_pool.NAME]: PHP-FPM pools the php routes run their scripts on.
#include "common/config/php_pool_address.h"
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

void readAddress(TableReader& table, PhpPoolConfig& pool) {
  const ConfigValue* value = table.require("address");
  std::string address;
  if (value == nullptr || !table.readString("address", address)) return;
  Status parsed = parsePhpPoolAddress(address, pool);
  if (!parsed.ok()) table.error(*value, "address", parsed.message());
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
  if (ctx.options().php_pools_from_controller) {
    // Under the controller the table only tunes the worker's side; where the pool is and
    // how many connections it takes come with `scalwsctl pool assign`.
    for (std::string_view key : {"address", "max_conns"}) {
      if (const ConfigValue* value = table.get(key)) {
        table.error(*value, key,
                    "set by the controller for the pool assigned to this instance "
                    "(scalwsctl pool add / pool assign); leave it out here");
      }
    }
  } else {
    readAddress(table, pool);
    uint32_t max_conns = 0;
    if (table.readInteger("max_conns", 1, kMaxConns, max_conns)) pool.max_conns = max_conns;
  }
  table.readPositiveDuration("timeout", pool.timeout);
  table.readPositiveDuration("queue_timeout", pool.queue_timeout);
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
  // Under the controller the pools come from it; it checks the names at start and reload.
  if (ctx.options().php_pools_from_controller) return;
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
