#include "ipc/cache_messages.h"

#include <climits>

#include "common/config/cache_config.h"

namespace scalws::ipc {

using common::Result;

namespace {

// A worker's report may hold one entry per [cache] of its config, and a config holds few.
constexpr size_t kMaxCaches = 64;

Result<std::string> cacheNameField(const Json& object, std::string_view key) {
  Result<std::string> name = stringField(object, key);
  if (!name.ok()) return name.status();
  if (!common::config::isCacheName(*name)) {
    return common::invalidArgument(
        "\"" + std::string(key) +
        "\" must be a cache name (letters, digits, '-', '_', '.'; 1 to 64)");
  }
  return name;
}

Result<std::string> areaNameField(const Json& object, std::string_view key) {
  Result<std::string> name = stringField(object, key);
  if (!name.ok()) return name.status();
  if (!isAreaName(*name)) {
    return common::invalidArgument("\"" + std::string(key) +
                                   "\" must be a cache name (letters, digits, '-', '_', '.'; 1 "
                                   "to 64) or " +
                                   std::string(kLimitAreaName));
  }
  return name;
}

Result<uint64_t> countField(const Json& object, std::string_view key) {
  return uintField(object, key);
}

// A URL as the cache keys requests (worker/handlers/cache/cache_key.h): the host in lower
// case and without its port, the rest as given. `url` starts with http:// or https://.
std::string keyedUrl(std::string_view url) {
  size_t host_at = url.find("://") + 3;
  size_t end = url.find_first_of("/?", host_at);
  if (end == std::string_view::npos) end = url.size();
  std::string_view authority = url.substr(host_at, end - host_at);
  size_t host_end = authority.starts_with('[') ? authority.find(']') : authority.find(':');
  if (host_end != std::string_view::npos && authority.starts_with('[')) ++host_end;
  std::string_view host = authority.substr(0, host_end);
  std::string out(url.substr(0, host_at));
  for (char c : host) out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  out += url.substr(end);
  return out;
}

}  // namespace

bool isAreaName(std::string_view name) {
  return name == kLimitAreaName || common::config::isCacheName(name);
}

Json cacheAreaReportsJson(const std::vector<CacheAreaReport>& reports) {
  Json out = Json::array();
  for (const CacheAreaReport& r : reports) {
    out.push_back({{"name", r.name}, {"fd", static_cast<uint64_t>(r.fd < 0 ? 0 : r.fd)}});
  }
  return out;
}

Result<std::vector<CacheAreaReport>> cacheAreaReportsFrom(const Json& args) {
  std::vector<CacheAreaReport> out;
  auto it = args.find("caches");
  if (it == args.end()) return out;
  // The caches' areas, and the limit table.
  if (!it->is_array() || it->size() > kMaxCaches + 1) {
    return common::invalidArgument("\"caches\" must be an array of at most 65");
  }
  for (const Json& entry : *it) {
    if (!entry.is_object()) return common::invalidArgument("caches: entries must be objects");
    Result<std::string> name = areaNameField(entry, "name");
    if (!name.ok()) return common::invalidArgument("caches: " + name.status().message());
    Result<uint64_t> fd = uintField(entry, "fd");
    if (!fd.ok() || *fd > INT_MAX) return common::invalidArgument("caches: \"fd\" is out of range");
    out.push_back(CacheAreaReport{std::move(name).value(), static_cast<int>(*fd)});
  }
  return out;
}

Json CachePurge::encode() const {
  static constexpr std::string_view kScopes[] = {"url", "prefix", "all"};
  Json out = {{"scope", kScopes[static_cast<size_t>(scope)]}};
  if (!instance.empty()) out["name"] = instance;
  if (!cache.empty()) out["cache"] = cache;
  if (scope != Scope::kAll) out["target"] = target;
  return out;
}

Result<CachePurge> CachePurge::decode(const Json& args) {
  CachePurge p;
  if (args.contains("name")) {
    Result<std::string> instance = stringField(args, "name");
    if (!instance.ok()) return instance.status();
    p.instance = std::move(instance).value();
  }
  if (args.contains("cache")) {
    Result<std::string> cache = cacheNameField(args, "cache");
    if (!cache.ok()) return cache.status();
    p.cache = std::move(cache).value();
  }
  Result<std::string> scope = stringField(args, "scope");
  if (!scope.ok()) return scope.status();
  if (*scope == "url") {
    p.scope = Scope::kUrl;
  } else if (*scope == "prefix") {
    p.scope = Scope::kPrefix;
  } else if (*scope == "all") {
    p.scope = Scope::kAll;
    return p;
  } else {
    return common::invalidArgument("\"scope\" must be \"url\", \"prefix\" or \"all\"");
  }
  Result<std::string> target = stringField(args, "target");
  if (!target.ok()) return target.status();
  // What the cache keys by: "http://" or "https://", a host, a path; nothing that cannot
  // be part of a request line.
  std::string_view t = *target;
  bool scheme = t.starts_with("http://") || t.starts_with("https://");
  if (!scheme || t.size() > kMaxCachePurgeTargetLength) {
    return common::invalidArgument(
        "\"target\" must be an absolute http:// or https:// URL (at most 8192 bytes)");
  }
  for (char c : t) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return common::invalidArgument("\"target\" must hold no spaces or control characters");
    }
  }
  p.target = keyedUrl(t);
  return p;
}

Json CachePurgeResult::encode() const {
  return {{"memory_entries", memory_entries}, {"disk_files", disk_files}};
}

Result<CachePurgeResult> CachePurgeResult::decode(const Json& result) {
  CachePurgeResult r;
  Result<uint64_t> memory = countField(result, "memory_entries");
  if (!memory.ok()) return memory.status();
  Result<uint64_t> disk = countField(result, "disk_files");
  if (!disk.ok()) return disk.status();
  r.memory_entries = *memory;
  r.disk_files = *disk;
  return r;
}

Json cacheFiguresJson(const std::vector<CacheFigures>& figures) {
  Json out = Json::array();
  for (const CacheFigures& f : figures) {
    out.push_back({{"name", f.name},
                   {"entries", f.entries},
                   {"memory_bytes", f.memory_bytes},
                   {"disk_bytes", f.disk_bytes}});
  }
  return out;
}

Result<std::vector<CacheFigures>> cacheFiguresFrom(const Json& list) {
  if (!list.is_array() || list.size() > kMaxCaches) {
    return common::invalidArgument("\"caches\" must be an array of at most 64");
  }
  std::vector<CacheFigures> out;
  for (const Json& entry : list) {
    if (!entry.is_object()) return common::invalidArgument("caches: entries must be objects");
    CacheFigures f;
    Result<std::string> name = cacheNameField(entry, "name");
    if (!name.ok()) return name.status();
    f.name = std::move(name).value();
    Result<uint64_t> entries = countField(entry, "entries");
    Result<uint64_t> memory = countField(entry, "memory_bytes");
    Result<uint64_t> disk = countField(entry, "disk_bytes");
    if (!entries.ok() || !memory.ok() || !disk.ok()) {
      return common::invalidArgument(
          "caches: \"entries\", \"memory_bytes\" and \"disk_bytes\" "
          "must be unsigned numbers");
    }
    f.entries = *entries;
    f.memory_bytes = *memory;
    f.disk_bytes = *disk;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace scalws::ipc
