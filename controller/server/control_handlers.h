// ControlHandlers: the controller's answers to scalwsctl (the kCtl -> kController rows of
// ipc/ops.cpp). Each handler validates everything it can before it changes anything, so a
// refused operation leaves the DB as it was; changes go through the StateStore (one
// transaction each) and processes through the InstanceRuntime.
//
// Args and results (JSON objects; times are Unix ms):
//   status            {} -> {version, pid, state_dir, socket, started_ms, uptime_ms,
//                     host_cpus, reserved_cpus, instances:{total, running, starting,
//                     stopping, stopped, failed}, processes, instance_metrics:[STATUS
//                     LINE of metrics_report.h, one per instance], shared_addresses:
//                     [SHARED]}
//   cpu.list          {} -> {cpus:[{cpu, in_host, exclusive, shared:[names]}]}
//   instance.list     {} -> {instances:[SUMMARY]}
//   instance.show     {name, events?:N (default 10)} -> SUMMARY + {config_path,
//                     config:{listen:[...], routes}, reload_pending, created_ms,
//                     updated_ms, processes:[{slot, pid, state, cpus, started_ms,
//                     restarts, attached}], php_pools:[{name, pool, address, max_conns,
//                     share}], unbound_pools:[names its php routes use that no pool is
//                     assigned as], upstreams: UPSTREAMS of metrics_report.h (when
//                     metrics are collected), caches:[{name, entries, memory_bytes,
//                     disk_bytes}] (as a worker last said), apps:[{name, as, state}]
//                     (the apps assigned to it), unbound_apps:[names its app routes use
//                     that no app is assigned as], shared:[SHARED] (the shared addresses
//                     it claims names on), events:[EVENT]}
//   instance.logs     {name, limit?:N (default 50)} -> {events:[EVENT]}
//   instance.metrics  {name, since_ms?:N (default 5 min, at most 31 days)} -> see
//                     metrics_report.h, plus shared:[{address, handoffs, counters}]
//   instance.add      {name, config, config_path, mode?, cpus?, user?, share_user?,
//                     shared_cpus?} -> SUMMARY. mode "multi" (default) or "single";
//                     cpus >= 1 (default 1); user: by default a system user of its own
//                     (system_accounts.h: made now, removed with the instance), else an
//                     existing user; a uid 0 user is refused (permission_denied) unless
//                     the controller runs with --allow-root-instances, and a user another
//                     instance runs as is refused (conflict) unless share_user is true;
//                     config_path absolute; the config must load without [server] and
//                     listen nowhere another instance listens, except on the same host
//                     and port under the sharing rules (controller/shared/sharing_rules.h:
//                     names claimed once, one default, all TLS or all plain, no HTTP/3).
//   instance.set      {name, config, config_path} -> SUMMARY (applies on reload/restart)
//   instance.remove   {name} -> {} (stopped first; the user made for it is removed)
//   instance.start|stop|restart|reload  {name} -> SUMMARY once done
//   instance.cache.purge  {name, cache?, scope:"url"|"prefix"|"all", target?} (CachePurge
//                     of ipc/cache_messages.h) -> {memory_entries, disk_files} once every
//                     serving worker dropped them; not_found when the instance has no such
//                     [cache], failed when it is not running
//   instance.cache.show   {name} -> {name, status, caches:[{name, memory, disk, max_disk,
//                     entries, memory_bytes, disk_bytes (null before a worker said)}],
//                     lookups: the proxy_cache FIGURES of the last 5 minutes (or null)}
//   instance.reopen_logs  {name} | {all:true} -> {instances:[NAME...]} once every worker
//                     of each writes to the reopened access log (log_handlers.cpp); with
//                     all, the running instances (none: an empty list); failed when a named
//                     one is not running or a file cannot be opened
//   pool.*            see pool_handlers.h
// SUMMARY = {name, mode, cpus, assigned_cpus, shared_cpus, user, desired, status, reason,
//            process_count}; EVENT = {id, time_ms, kind, message}; SHARED = {address, tls,
//            default, fronts:[{slot, pid, state, started_ms, restarts, checked, sandbox}],
//            instances:[{name, names, default, running, workers_up, handoffs}], counters:
//            {accepted, handed_off, unknown_name, unavailable, peek_timeouts, invalid,
//            h2c_refused, queue_full, evicted, waiting}} (controller/shared/).
// Errors: not_found (no such instance), conflict (name taken, address in use by another
// instance), invalid_argument (bad args or config), failed (CPUs exhausted, start failed,
// not running, ...), permission_denied (a write from someone neither root nor in group
// scalws; decided by the endpoint).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/cpu_set.h"
#include "controller/instances/instance_runtime.h"
#include "controller/pools/pool_runtime.h"
#include "controller/server/app_handlers.h"
#include "controller/server/handler_support.h"
#include "controller/server/pool_handlers.h"
#include "controller/state/state_disk.h"
#include "controller/state/state_store.h"
#include "controller/system_accounts.h"
#include "ipc/endpoint.h"
#include "ipc/handler_table.h"

namespace scalws::controller {

class MetricsCollector;

struct ControllerInfo {
  std::string version;
  pid_t pid = 0;
  std::string state_dir;
  std::string socket_path;
  int64_t started_ms = 0;
  common::CpuSet reserved_cpus;
  bool allow_root_instances = false;  // --allow-root-instances
};

class ControlHandlers : private HandlerTypes {
 public:
  // `pools`: the managed PHP pools' runtime; null runs no managed pools.
  // `accounts` makes and removes the instances' own users.
  ControlHandlers(state::StateStore& store, InstanceRuntime& runtime, Accounts& accounts,
                  ControllerInfo info, PoolRuntime* pools = nullptr, AppRuntime* apps = nullptr);

  // Where instance.metrics and the status lines read from (null: they report nothing).
  void setMetrics(MetricsCollector* metrics) { metrics_ = metrics; }
  // Whose answer `status` reports as state_disk (null: not reported).
  void setStateDisk(state::StateDisk* disk) { state_disk_ = disk; }

  // Registers its handlers and the pool handlers' on a scalwsctl connection.
  common::Status registerOn(ipc::Endpoint& endpoint);

  // The reply a read op (status, cpu.list, instance.list|show|logs|metrics|cache.show,
  // pool.list) gives scalwsctl, for the dashboard's API: the same figures by the same
  // code. Any other op is kInvalidArgument: nothing reached this way changes anything.
  common::Result<ipc::Json> read(std::string_view op, const ipc::Json& args);

 private:
  Reply status(const ipc::Json& args);
  Reply cpuList(const ipc::Json& args);
  Reply instanceList(const ipc::Json& args);
  Reply instanceShow(const ipc::Json& args);
  Reply instanceLogs(const ipc::Json& args);
  Reply instanceMetrics(const ipc::Json& args);
  Reply instanceAdd(const ipc::Json& args);
  Reply instanceSet(const ipc::Json& args);
  void instanceRemove(In& in, Out out);
  void instanceStart(In& in, Out out);
  void instanceStop(In& in, Out out);
  void instanceRestart(In& in, Out out);
  void instanceReload(In& in, Out out);
  void instanceCachePurge(In& in, Out out);
  Reply instanceCacheShow(const ipc::Json& args);
  void instanceReopenLogs(In& in, Out out);
  // The instance args["name"] names, as stored.
  common::Result<state::InstanceRecord> namedInstance(const ipc::Json& args);
  // The named instance's Done: replies SUMMARY once the runtime is done, or the error.
  // Fails `out` (and returns null) when args name no stored instance.
  InstanceRuntime::Done summaryWhenDone(const ipc::Json& args, Out& out, std::string* name);
  // Stores the operator's intent for `name` (run by the runtime once the operation is sure).
  InstanceRuntime::Commit desire(const std::string& name, state::DesiredState desired);

  // Who the workers of the instance in `spec` run as (spec.user), from args; sets *create
  // when that is its own user and it does not exist yet.
  common::Status chooseUser(const ipc::Json& args, state::NewInstance& spec, bool* create);
  // After an instance went: its own user too, unless another instance runs as it.
  void removeUserOf(const state::InstanceRecord& record);
  // The config in args, loaded, and checked against every other instance's addresses.
  common::Result<std::string> checkedConfig(const std::string& name, const ipc::Json& args,
                                            std::string* config_path);
  // `site` (instance `name`'s) beside every other instance's stored and running configs:
  // the sharing rules of controller/shared/sharing_rules.h (conflict, naming the other).
  common::Status checkSharing(const std::string& name, const common::config::SiteConfig& site);
  ipc::Json summary(const state::InstanceRecord& record) const;
  // php_pools, unbound_pools and whether the running pools differ from the stored ones.
  void addPoolBindings(const state::InstanceRecord& record, ipc::Json& out);
  // unbound_apps (names its stored config's app routes use that no app is assigned as),
  // and reload_pending when the running apps differ from the assigned ones.
  void addAppBindings(const state::InstanceRecord& record, const common::config::SiteConfig* stored,
                      ipc::Json& out);
  // SUMMARY of `name` as stored now.
  Reply summaryOf(const std::string& name);

  state::StateStore& store_;
  InstanceRuntime& runtime_;
  Accounts& accounts_;
  ControllerInfo info_;
  MetricsCollector* metrics_ = nullptr;
  state::StateDisk* state_disk_ = nullptr;
  PoolRuntime* pool_runtime_;
  AppRuntime* app_runtime_;
  PoolHandlers pools_;
  AppHandlers apps_;

  static const ipc::OpHandler<ControlHandlers> kHandlers[];
};

ipc::Json eventJson(const state::EventRecord& event);

}  // namespace scalws::controller
