#include "controller/ctl/ctl_cache_output.h"

#include "controller/ctl/ctl_format.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

// A size a worker reported, or "-" before any did.
std::string reported(const Json& cache, std::string_view key) {
  auto it = cache.find(key);
  if (it == cache.end() || !it->is_number_unsigned()) return "-";
  return formatBytes(static_cast<double>(it->get<uint64_t>()));
}

}  // namespace

std::string renderCacheShow(const Json& r) {
  std::string out = labelled("instance", text(r, "name")) + labelled("status", text(r, "status"));
  std::vector<std::vector<std::string>> rows;
  for (const Json& c : array(r, "caches")) {
    bool has_disk = !text(c, "disk", "").empty();
    rows.push_back({text(c, "name"), text(c, "entries"), reported(c, "memory_bytes"),
                    formatBytes(static_cast<double>(unsignedAt(c, "memory"))),
                    has_disk ? reported(c, "disk_bytes") : "-",
                    has_disk ? formatBytes(static_cast<double>(unsignedAt(c, "max_disk"))) : "-",
                    has_disk ? text(c, "disk") : "-"});
  }
  out += "\n" + renderTable({"CACHE", "ENTRIES", "MEMORY", "OF", "DISK", "OF", "DIRECTORY"}, rows);
  const Json& lookups = object(r, "lookups");
  if (!lookups.empty()) {
    const Json& rate = lookups.contains("hit_rate") ? lookups["hit_rate"] : Json(nullptr);
    out += "\n" + labelled("last 5 min", text(lookups, "hits", "0") + " hits, " +
                                             text(lookups, "stale", "0") + " stale, " +
                                             text(lookups, "misses", "0") + " misses, " +
                                             text(lookups, "revalidations", "0") + " revalidated");
    out += labelled("hit rate", rate.is_number() ? formatPercent(rate.get<double>()) : "-");
  }
  return out;
}

std::string renderCachePurge(const Json& r) {
  return "purged " + text(r, "memory_entries", "0") + " entries from memory, " +
         text(r, "disk_files", "0") + " files from disk\n";
}

}  // namespace scalws::ctl
