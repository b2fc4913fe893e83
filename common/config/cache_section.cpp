// [cache.NAME]: the response caches proxy routes store answers in.
#include <charconv>

#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {
namespace {

constexpr size_t kMaxCacheName = 64;
// Below this the memory tier cannot hold its index and a handful of entries.
constexpr Bytes kMinMemory = 1ull << 20;
// A mapping this large is a typo ("256g" for "256m"), not a cache.
constexpr Bytes kMaxMemory = 1ull << 40;

bool isTokenText(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    // RFC 9110 §5.6.2 tchar.
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

std::string lowerCase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

// One element of `key`: "scheme", "host", "path", "query", "method", "header:NAME" or
// "cookie:NAME". False (with the reason in `why`) when it is none of them.
bool parseKeyPart(std::string_view text, CacheKeyPart& out, std::string& why) {
  using Kind = CacheKeyPart::Kind;
  static constexpr std::pair<std::string_view, Kind> kPlain[] = {
      {"scheme", Kind::kScheme}, {"host", Kind::kHost},     {"path", Kind::kPath},
      {"query", Kind::kQuery},   {"method", Kind::kMethod},
  };
  for (const auto& [name, kind] : kPlain) {
    if (text == name) {
      out = CacheKeyPart{kind, {}};
      return true;
    }
  }
  for (auto [prefix, kind] : {std::pair<std::string_view, Kind>{"header:", Kind::kHeader},
                              std::pair<std::string_view, Kind>{"cookie:", Kind::kCookie}}) {
    if (text.substr(0, prefix.size()) != prefix) continue;
    std::string_view name = text.substr(prefix.size());
    if (!isTokenText(name)) {
      why = "\"" + std::string(text) + "\": the name after \"" + std::string(prefix) +
            "\" must be a token (letters, digits and !#$%&'*+-.^_`|~)";
      return false;
    }
    // Field names are case-insensitive; cookie names are not.
    out = CacheKeyPart{kind, kind == Kind::kHeader ? lowerCase(name) : std::string(name)};
    return true;
  }
  why = "unknown element \"" + std::string(text) +
        "\" (expected \"scheme\", \"host\", \"path\", \"query\", \"method\", "
        "\"header:NAME\" or \"cookie:NAME\")";
  return false;
}

void readKey(TableReader& table, CacheConfig& cache) {
  const ConfigValue* value = table.get("key");
  if (value == nullptr) return;
  std::string path = table.keyPath("key");
  if (!expectType(*value, ConfigValue::Type::kArray, path, table.context())) return;
  if (value->array.empty()) {
    table.error(*value, "key", "must name at least one part");
    return;
  }
  std::vector<CacheKeyPart> parts;
  bool ok = forEachString(*value, path, table.context(),
                          [&](const ConfigValue& element, const std::string& element_path) {
                            CacheKeyPart part;
                            std::string why;
                            if (!parseKeyPart(element.string, part, why)) {
                              table.context().error(element.where, element_path + ": " + why);
                              return;
                            }
                            for (const CacheKeyPart& seen : parts) {
                              if (seen.kind == part.kind && seen.name == part.name) {
                                table.context().error(element.where,
                                                      element_path + ": \"" + element.string +
                                                          "\" is already part of the key");
                                return;
                              }
                            }
                            parts.push_back(std::move(part));
                          });
  if (ok && parts.size() == value->array.size()) cache.key = std::move(parts);
}

void readDefaultTtl(TableReader& table, CacheConfig& cache) {
  const ConfigValue* value = table.get("default_ttl");
  if (value == nullptr) return;
  std::string path = table.keyPath("default_ttl");
  if (!expectType(*value, ConfigValue::Type::kTable, path, table.context())) return;
  for (const ConfigEntry& entry : value->entries) {
    std::string entry_path = path + "." + entry.key;
    unsigned status = 0;
    const char* end = entry.key.data() + entry.key.size();
    auto [ptr, ec] = std::from_chars(entry.key.data(), end, status);
    if (entry.key.size() != 3 || ec != std::errc() || ptr != end || status < 200 || status > 599) {
      table.context().error(entry.where, entry_path +
                                             ": expected a final status code from \"200\" to "
                                             "\"599\" as the key");
      continue;
    }
    // RFC 9111 §3: a partial answer (206) is never stored as a whole, and a 304 only
    // updates what is stored.
    if (status == 206 || status == 304) {
      table.context().error(entry.where, entry_path + ": a " + entry.key +
                                             " response is never stored, so it has no TTL");
      continue;
    }
    Milliseconds ttl = 0;
    if (!readDurationValue(entry.value, entry_path, table.context(), ttl)) continue;
    if (ttl == 0) {
      table.context().error(entry.value.where, entry_path + ": must be greater than zero");
      continue;
    }
    cache.default_ttl.push_back(CacheDefaultTtl{static_cast<uint16_t>(status), ttl});
  }
}

void parseCache(const ConfigEntry& entry, ParseContext& ctx, SiteConfig& site) {
  std::string path = "cache." + entry.key;
  if (!isCacheName(entry.key)) {
    ctx.error(entry.where, "cache: \"" + entry.key +
                               "\" is not a cache name (letters, digits, '-', '_', '.'; at most " +
                               std::to_string(kMaxCacheName) + ")");
    return;
  }
  if (!expectType(entry.value, ConfigValue::Type::kTable, path, ctx)) return;
  CacheConfig cache;
  cache.name = entry.key;
  cache.where = entry.value.where;
  TableReader table(entry.value, path, ctx);

  if (table.readSize("memory", cache.memory) &&
      (cache.memory < kMinMemory || cache.memory > kMaxMemory)) {
    table.error(*table.get("memory"), "memory", "must be between 1m and 1024g");
  }
  std::string disk;
  if (table.readString("disk", disk)) {
    if (disk.empty()) {
      table.error(*table.get("disk"), "disk", "must name a directory (leave it out for none)");
    } else {
      cache.disk = ctx.resolvePath(disk);
      if (cache.disk == "/") table.error(*table.get("disk"), "disk", "must not be \"/\"");
    }
  }
  if (table.readSize("max_disk", cache.max_disk)) {
    if (cache.max_disk == 0) table.error(*table.get("max_disk"), "max_disk", "must be > 0");
    if (table.get("disk") == nullptr) {
      table.error(*table.get("max_disk"), "max_disk", "needs `disk`, the directory it limits");
    }
  }
  if (table.readDuration("inactive", cache.inactive) && cache.inactive == 0) {
    table.error(*table.get("inactive"), "inactive", "must be greater than zero");
  }
  readKey(table, cache);
  readDefaultTtl(table, cache);
  if (table.readSize("max_entry", cache.max_entry)) {
    if (cache.max_entry == 0) {
      table.error(*table.get("max_entry"), "max_entry", "must be greater than zero");
    } else if (cache.max_entry > cache.memory / 2) {
      // An entry larger than half the memory tier would evict nearly everything else.
      table.error(*table.get("max_entry"), "max_entry",
                  "must be at most half of memory (" + std::to_string(cache.memory) + " bytes)");
    }
  } else if (cache.max_entry > cache.memory / 2) {
    cache.max_entry = cache.memory / 2;  // the default follows a small memory tier
  }
  table.readDuration("lock_timeout", cache.lock_timeout);
  table.readDuration("stale_if_error", cache.stale_if_error);
  table.readBool("cache_status_header", cache.cache_status_header);
  table.readEnum<CacheConfig::SetCookie>("set_cookie",
                                         {{"bypass", CacheConfig::SetCookie::kBypass},
                                          {"strip", CacheConfig::SetCookie::kStrip},
                                          {"store", CacheConfig::SetCookie::kStore}},
                                         cache.set_cookie);
  table.finish();
  site.caches.push_back(std::move(cache));
}

}  // namespace

void parseCachePurgeAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                           RouteConfig& route) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  CachePurgeAction action;
  action.where = value.where;
  TableReader table(value, path, ctx);
  if (table.require("cache") != nullptr && table.readString("cache", action.cache)) {
    action.where = table.get("cache")->where;
  }
  table.finish();
  route.action = std::move(action);
}

void checkCacheReferences(ParseContext& ctx, const SiteConfig& site) {
  auto exists = [&site](const std::string& name) {
    for (const CacheConfig& cache : site.caches) {
      if (cache.name == name) return true;
    }
    return false;
  };
  for (const RouteConfig& route : site.routes) {
    if (const auto* proxy = std::get_if<ProxyAction>(&route.action)) {
      if (!proxy->cache.empty() && !exists(proxy->cache)) {
        ctx.error(proxy->cache_where,
                  "route.proxy.cache: no [cache." + proxy->cache + "] in this config");
      }
    } else if (const auto* purge = std::get_if<CachePurgeAction>(&route.action)) {
      if (!purge->cache.empty() && !exists(purge->cache)) {
        ctx.error(purge->where,
                  "route.cache_purge.cache: no [cache." + purge->cache + "] in this config");
      }
    }
  }
}

void parseCacheSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!expectType(value, ConfigValue::Type::kTable, "cache", ctx)) return;
  // TOML already refuses a table defined twice, so names are unique here.
  for (const ConfigEntry& entry : value.entries) parseCache(entry, ctx, site);
}

bool isCacheName(std::string_view name) {
  if (name.empty() || name.size() > kMaxCacheName) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool sameCacheStorage(const CacheConfig& a, const CacheConfig& b) {
  return a.name == b.name && a.memory == b.memory && a.disk == b.disk && a.max_disk == b.max_disk &&
         a.max_entry == b.max_entry;
}

}  // namespace scalws::common::config
