// ControlHandlers: an instance's response caches (instance.cache.purge|show). The areas
// are the instance's workers' (controller/instances/instance_caches.h): a purge goes to
// every one of them and is answered once all did; the sizes are what a worker last said.
#include <memory>

#include "controller/instances/instance_config.h"
#include "controller/metrics/metrics_report.h"
#include "controller/server/control_handlers.h"

namespace scalws::controller {

using namespace handler_names;

namespace {

// The config the instance's workers run, else the stored one.
Result<common::config::SiteConfig> siteOf(const state::InstanceRecord& record,
                                          const InstanceRuntime& runtime) {
  std::optional<common::config::SiteConfig> running = runtime.runningSite(record.name);
  if (running) return *running;
  return loadInstanceConfig(record.config, record.config_path);
}

}  // namespace

void ControlHandlers::instanceCachePurge(In& in, Out out) {
  Result<ipc::CachePurge> purge = ipc::CachePurge::decode(in.args());
  if (!purge.ok()) return out.fail(purge.status());
  Result<state::InstanceRecord> record = store_.getInstance(purge->instance);
  if (!record.ok()) return out.fail(record.status());
  Result<common::config::SiteConfig> site = siteOf(*record, runtime_);
  if (!site.ok()) return out.fail(site.status());
  bool named = purge->cache.empty() && !site->caches.empty();
  for (const common::config::CacheConfig& c : site->caches) named = named || c.name == purge->cache;
  if (!named) {
    return out.fail(Status(common::StatusCode::kNotFound,
                           site->caches.empty() ? "instance " + record->name + " has no [cache]"
                                                : "instance " + record->name + " has no [cache." +
                                                      purge->cache + "]"));
  }
  std::string name = record->name;
  purge->instance.clear();  // the workers' message names no instance
  auto shared = std::make_shared<ipc::Replier>(std::move(out));
  runtime_.purgeCache(name, *purge, [shared](Result<ipc::CachePurgeResult> done) {
    if (!done.ok()) return shared->fail(done.status());
    shared->ok(done->encode());
  });
}

Result<Json> ControlHandlers::instanceCacheShow(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(state::InstanceRecord record, namedInstance(args));
  SCALWS_ASSIGN_OR_RETURN(common::config::SiteConfig site, siteOf(record, runtime_));
  std::vector<ipc::CacheFigures> figures = runtime_.cacheFigures(record.name);
  Json caches = Json::array();
  for (const common::config::CacheConfig& c : site.caches) {
    Json entry = {{"name", c.name},       {"memory", c.memory},
                  {"disk", c.disk},       {"max_disk", c.disk.empty() ? 0 : c.max_disk},
                  {"entries", nullptr},   {"memory_bytes", nullptr},
                  {"disk_bytes", nullptr}};
    for (const ipc::CacheFigures& f : figures) {
      if (f.name != c.name) continue;
      entry["entries"] = f.entries;
      entry["memory_bytes"] = f.memory_bytes;
      entry["disk_bytes"] = f.disk_bytes;
    }
    caches.push_back(std::move(entry));
  }
  Json out = {{"name", record.name},
              {"status", runtime_.runtimeState(record.name)},
              {"caches", std::move(caches)},
              {"lookups", nullptr}};
  // Hits, misses and the hit rate of the last five minutes, as instance.metrics has them.
  if (metrics_ != nullptr) {
    Result<Json> metrics =
        instanceMetricsJson(*metrics_, record.name, runtime_.runtimeState(record.name),
                            runtime_.processCount(record.name), kDefaultMetricsSinceMs);
    if (metrics.ok()) out["lookups"] = (*metrics)["window"]["proxy_cache"];
  }
  return out;
}

}  // namespace scalws::controller
