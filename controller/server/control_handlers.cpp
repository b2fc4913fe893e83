// ControlHandlers: the table of ops, and the reads (status, cpu.list, instance.list|show|
// logs|metrics). The writes are in instance_writes.cpp.
#include "controller/server/control_handlers.h"

#include <chrono>

#include "common/quoted.h"
#include "controller/apps/app_binding.h"
#include "controller/child_process.h"
#include "controller/instances/instance_config.h"
#include "controller/metrics/metrics_report.h"
#include "controller/pools/pool_binding.h"
#include "controller/route_bindings.h"

namespace scalws::controller {

using namespace handler_names;

namespace {

constexpr uint64_t kMaxEvents = 1000;

Result<int> eventLimit(const Json& args, std::string_view key, int fallback) {
  SCALWS_ASSIGN_OR_RETURN(uint64_t n, ipc::optionalUint(args, key, fallback));
  if (n > kMaxEvents) {
    return common::invalidArgument(common::quoted(key) + " must be at most " +
                                   std::to_string(kMaxEvents));
  }
  return static_cast<int>(n);
}

}  // namespace

const ipc::OpHandler<ControlHandlers> ControlHandlers::kHandlers[] = {
    {ipc::op::kStatus, &ControlHandlers::status},
    {ipc::op::kCpuList, &ControlHandlers::cpuList},
    {ipc::op::kInstanceList, &ControlHandlers::instanceList},
    {ipc::op::kInstanceShow, &ControlHandlers::instanceShow},
    {ipc::op::kInstanceLogs, &ControlHandlers::instanceLogs},
    {ipc::op::kInstanceMetrics, &ControlHandlers::instanceMetrics},
    {ipc::op::kInstanceAdd, &ControlHandlers::instanceAdd},
    {ipc::op::kInstanceSet, &ControlHandlers::instanceSet},
    {ipc::op::kInstanceRemove, &ControlHandlers::instanceRemove},
    {ipc::op::kInstanceStart, &ControlHandlers::instanceStart},
    {ipc::op::kInstanceStop, &ControlHandlers::instanceStop},
    {ipc::op::kInstanceRestart, &ControlHandlers::instanceRestart},
    {ipc::op::kInstanceReload, &ControlHandlers::instanceReload},
    {ipc::op::kInstanceCachePurge, &ControlHandlers::instanceCachePurge},
    {ipc::op::kInstanceCacheShow, &ControlHandlers::instanceCacheShow},
    {ipc::op::kInstanceReopenLogs, &ControlHandlers::instanceReopenLogs},
};

Json eventJson(const state::EventRecord& event) {
  return {{"id", event.id},
          {"time_ms", event.time_ms},
          {"kind", event.kind},
          {"message", event.message}};
}

ControlHandlers::ControlHandlers(state::StateStore& store, InstanceRuntime& runtime,
                                 Accounts& accounts, ControllerInfo info, PoolRuntime* pools,
                                 AppRuntime* apps)
    : store_(store),
      runtime_(runtime),
      accounts_(accounts),
      info_(std::move(info)),
      pool_runtime_(pools),
      app_runtime_(apps),
      pools_(store, runtime, pools),
      apps_(store, runtime, apps) {}

Status ControlHandlers::registerOn(ipc::Endpoint& endpoint) {
  SCALWS_RETURN_IF_ERROR(ipc::registerHandlers<ControlHandlers>(endpoint, *this, kHandlers));
  SCALWS_RETURN_IF_ERROR(pools_.registerOn(endpoint));
  return apps_.registerOn(endpoint);
}

Result<Json> ControlHandlers::read(std::string_view op, const Json& args) {
  if (op == ipc::op::kStatus) return status(args);
  if (op == ipc::op::kCpuList) return cpuList(args);
  if (op == ipc::op::kInstanceList) return instanceList(args);
  if (op == ipc::op::kInstanceShow) return instanceShow(args);
  if (op == ipc::op::kInstanceLogs) return instanceLogs(args);
  if (op == ipc::op::kInstanceMetrics) return instanceMetrics(args);
  if (op == ipc::op::kInstanceCacheShow) return instanceCacheShow(args);
  if (op == ipc::op::kPoolList) return pools_.listPools();
  return common::invalidArgument("not a read op: " + std::string(op));
}

Result<state::InstanceRecord> ControlHandlers::namedInstance(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(std::string name, ipc::stringField(args, "name"));
  return store_.getInstance(name);
}

Json ControlHandlers::summary(const state::InstanceRecord& r) const {
  return {{"name", r.name},
          {"mode", state::workerModeName(r.mode)},
          {"cpus", r.cpus},
          {"assigned_cpus", r.assigned_cpus.toString()},
          {"shared_cpus", r.shared_cpus},
          {"user", r.user},
          {"desired", state::desiredStateName(r.desired)},
          {"status", r.status},
          {"reason", r.status_reason},
          {"process_count", runtime_.processCount(r.name)}};
}

Result<Json> ControlHandlers::summaryOf(const std::string& name) {
  SCALWS_ASSIGN_OR_RETURN(state::InstanceRecord record, store_.getInstance(name));
  return summary(record);
}

// --- reads -------------------------------------------------------------------------------

Result<Json> ControlHandlers::status(const Json&) {
  SCALWS_ASSIGN_OR_RETURN(std::vector<state::InstanceRecord> all, store_.listInstances());
  Json counts = {{"total", all.size()}, {"running", 0}, {"starting", 0},
                 {"stopping", 0},       {"stopped", 0}, {"failed", 0}};
  size_t processes = 0;
  Json lines = Json::array();
  for (const state::InstanceRecord& r : all) {
    std::string s = runtime_.runtimeState(r.name);
    if (counts.contains(s)) counts[s] = counts[s].get<int>() + 1;
    processes += runtime_.processCount(r.name);
    if (metrics_ != nullptr) lines.push_back(statusLineJson(*metrics_, r.name, s));
  }
  int64_t now = wallMs();
  Json disk = nullptr;
  if (state_disk_ != nullptr) {
    state_disk_->check();
    disk = state_disk_->status();
  }
  return Json{{"version", info_.version},
              {"pid", info_.pid},
              {"state_dir", info_.state_dir},
              {"socket", info_.socket_path},
              {"started_ms", info_.started_ms},
              {"uptime_ms", now - info_.started_ms},
              {"host_cpus", store_.allocator().host().toString()},
              {"reserved_cpus", info_.reserved_cpus.toString()},
              {"instances", counts},
              {"processes", processes},
              {"instance_metrics", lines},
              {"state_disk", disk},
              {"shared_addresses", runtime_.sharedAddresses(std::nullopt)}};
}

Result<Json> ControlHandlers::cpuList(const Json&) {
  SCALWS_ASSIGN_OR_RETURN(std::vector<cpu::CpuUsage> usage, store_.cpuUsage());
  return Json{{"cpus", arrayOf(usage, [](const cpu::CpuUsage& u) {
                 return Json{{"cpu", u.cpu},
                             {"in_host", u.in_host},
                             {"exclusive", u.exclusive},
                             {"shared", u.shared}};
               })}};
}

Result<Json> ControlHandlers::instanceList(const Json&) {
  SCALWS_ASSIGN_OR_RETURN(std::vector<state::InstanceRecord> all, store_.listInstances());
  return Json{
      {"instances", arrayOf(all, [this](const state::InstanceRecord& r) { return summary(r); })}};
}

Result<Json> ControlHandlers::instanceShow(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(state::InstanceRecord record, namedInstance(args));
  SCALWS_ASSIGN_OR_RETURN(int limit, eventLimit(args, "events", 10));
  SCALWS_ASSIGN_OR_RETURN(std::vector<state::EventRecord> events,
                          store_.recentEvents(record.name, limit));
  Json out = summary(record);
  out["config_path"] = record.config_path;
  std::optional<common::config::SiteConfig> running = runtime_.runningSite(record.name);
  if (running) {
    out["config"] = configSummary(*running);
  } else {
    Result<common::config::SiteConfig> stored =
        loadInstanceConfig(record.config, record.config_path);
    out["config"] =
        stored.ok() ? configSummary(*stored) : Json{{"error", stored.status().message()}};
  }
  out["reload_pending"] = runtime_.reloadPending(record.name);
  addPoolBindings(record, out);
  out["created_ms"] = record.created_ms;
  out["updated_ms"] = record.updated_ms;
  out["processes"] = runtime_.processes(record.name);
  // The proxy's servers as the live workers see them (health, in flight, counts).
  if (metrics_ != nullptr)
    out["upstreams"] = common::metrics::toJson(metrics_->upstreamsNow(record.name));
  // Its caches' sizes as a worker last said (instance.cache.show has more).
  out["caches"] = ipc::cacheFiguresJson(runtime_.cacheFigures(record.name));
  Json apps = Json::array();
  Result<std::vector<state::AppRecord>> stored_apps = store_.listApps();
  if (stored_apps.ok()) {
    for (const state::AppRecord& app : *stored_apps) {
      if (app.instance != record.name) continue;
      Json status = app_runtime_ != nullptr ? app_runtime_->appStatus(app.name) : Json(nullptr);
      apps.push_back(
          {{"name", app.name},
           {"as", app.assigned_as},
           {"state", status.is_object() ? status.value("state", Json(nullptr)) : Json(nullptr)}});
    }
  }
  out["apps"] = std::move(apps);
  // The addresses it shares: who claims which name there, its fronts, their figures.
  out["shared"] = runtime_.sharedAddresses(record.name);
  out["events"] = arrayOf(events, eventJson);
  return out;
}

Result<Json> ControlHandlers::instanceLogs(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(state::InstanceRecord record, namedInstance(args));
  SCALWS_ASSIGN_OR_RETURN(int limit, eventLimit(args, "limit", 50));
  SCALWS_ASSIGN_OR_RETURN(std::vector<state::EventRecord> events,
                          store_.recentEvents(record.name, limit));
  return Json{{"events", arrayOf(events, eventJson)}};
}

Result<Json> ControlHandlers::instanceMetrics(const Json& args) {
  SCALWS_ASSIGN_OR_RETURN(state::InstanceRecord record, namedInstance(args));
  SCALWS_ASSIGN_OR_RETURN(uint64_t since,
                          ipc::optionalUint(args, "since_ms", kDefaultMetricsSinceMs));
  if (since < 1000 || since > static_cast<uint64_t>(kMaxMetricsSinceMs)) {
    return common::invalidArgument("\"since_ms\" must be from 1 s to 31 days");
  }
  if (metrics_ == nullptr) {
    return Status(common::StatusCode::kFailedPrecondition, "this controller collects no metrics");
  }
  const std::string& name = record.name;
  SCALWS_ASSIGN_OR_RETURN(
      Json out, instanceMetricsJson(*metrics_, name, runtime_.runtimeState(name),
                                    runtime_.processCount(name), static_cast<int64_t>(since)));
  // Its shared addresses: the connections handed to it there, and the address's figures.
  Json shared = Json::array();
  for (const Json& address : runtime_.sharedAddresses(name)) {
    uint64_t handoffs = 0;
    for (const Json& i : address["instances"]) {
      if (i["name"] == name) handoffs = i["handoffs"].get<uint64_t>();
    }
    shared.push_back({{"address", address["address"]},
                      {"handoffs", handoffs},
                      {"counters", address["counters"]}});
  }
  out["shared"] = std::move(shared);
  return out;
}

void ControlHandlers::addPoolBindings(const state::InstanceRecord& record, Json& out) {
  Result<std::vector<state::PoolRecord>> pools = store_.listPools();
  if (!pools.ok()) return;
  Json list = Json::array();
  std::vector<ipc::PhpPoolGrant> grants = poolGrantsFor(record, *pools);
  for (const ipc::PhpPoolGrant& g : grants) {
    std::string pool;
    for (const state::PoolRecord& p : *pools) {
      if (p.instance == record.name && p.assigned_as == g.name) pool = p.name;
    }
    list.push_back({{"name", g.name},
                    {"pool", pool},
                    {"address", g.address},
                    {"max_conns", g.max_conns},
                    {"share", g.share}});
  }
  out["php_pools"] = list;
  Result<common::config::SiteConfig> stored = loadInstanceConfig(record.config, record.config_path);
  out["unbound_pools"] =
      stored.ok() ? Json(unboundNames(phpPoolNames(*stored), grantNames(grants))) : Json::array();
  std::optional<std::vector<ipc::PhpPoolGrant>> running = runtime_.runningPools(record.name);
  if (running && *running != grants) out["reload_pending"] = true;
  addAppBindings(record, stored.ok() ? &*stored : nullptr, out);
}

void ControlHandlers::addAppBindings(const state::InstanceRecord& record,
                                     const common::config::SiteConfig* stored, Json& out) {
  Result<std::vector<state::AppRecord>> apps = store_.listApps();
  if (!apps.ok() || app_runtime_ == nullptr) return;
  AppRuntime* runtime = app_runtime_;
  std::vector<ipc::AppGrant> grants = appGrantsFor(
      record.name, *apps, [runtime](const AppSpec& spec) { return runtime->socketsOf(spec); });
  out["unbound_apps"] = stored != nullptr
                            ? Json(unboundNames(appRouteNames(*stored), grantNames(grants)))
                            : Json::array();
  std::optional<std::vector<ipc::AppGrant>> running = runtime_.runningApps(record.name);
  if (running && *running != grants) out["reload_pending"] = true;
}

}  // namespace scalws::controller
