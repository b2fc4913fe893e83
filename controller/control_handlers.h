// ControlHandlers: the controller's answers to scalwsctl (the kCtl -> kController rows of
// ipc/ops.cpp). Each handler validates everything it can before it changes anything, so a
// refused operation leaves the DB as it was; changes go through the StateStore (one
// transaction each) and processes through the InstanceRuntime.
//
// Args and results (JSON objects; times are Unix ms):
//   status            {} -> {version, pid, state_dir, socket, started_ms, uptime_ms,
//                     host_cpus, reserved_cpus, instances:{total, running, starting,
//                     stopping, stopped, failed}, processes, instance_metrics:[STATUS
//                     LINE of metrics_report.h, one per instance]}
//   cpu.list          {} -> {cpus:[{cpu, in_host, exclusive, shared:[names]}]}
//   instance.list     {} -> {instances:[SUMMARY]}
//   instance.show     {name, events?:N (default 10)} -> SUMMARY + {config_path,
//                     config:{listen:[...], routes}, reload_pending, created_ms,
//                     updated_ms, processes:[{slot, pid, state, cpus, started_ms,
//                     restarts, attached}], php_pools:[{name, pool, address, max_conns,
//                     share}], unbound_pools:[names its php routes use that no pool is
//                     assigned as], upstreams: UPSTREAMS of metrics_report.h (when
//                     metrics are collected), events:[EVENT]}
//   instance.logs     {name, limit?:N (default 50)} -> {events:[EVENT]}
//   instance.metrics  {name, since_ms?:N (default 5 min, at most 31 days)} -> see
//                     metrics_report.h
//   instance.add      {name, config, config_path, mode?, cpus?, user?, shared_cpus?}
//                     -> SUMMARY. mode "multi" (default) or "single"; cpus >= 1
//                     (default 1); user (default "nobody"; "root" only when named) must
//                     exist; config_path absolute; the config must load without [server]
//                     and listen nowhere another instance listens.
//   instance.set      {name, config, config_path} -> SUMMARY (applies on reload/restart)
//   instance.remove   {name} -> {} (stopped first)
//   instance.start|stop|restart|reload  {name} -> SUMMARY once done
//   pool.*            see pool_handlers.h
// SUMMARY = {name, mode, cpus, assigned_cpus, shared_cpus, user, desired, status, reason,
//            process_count}; EVENT = {id, time_ms, kind, message}.
// Errors: not_found (no such instance), conflict (name taken, address in use by another
// instance), invalid_argument (bad args or config), failed (CPUs exhausted, start failed,
// not running, ...), permission_denied (a write from someone neither root nor in group
// scalws; decided by the endpoint).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/cpu_set.h"
#include "controller/instance_runtime.h"
#include "controller/pool_handlers.h"
#include "controller/pool_runtime.h"
#include "controller/state/state_store.h"
#include "ipc/endpoint.h"

namespace scalws::controller {

class MetricsCollector;

inline constexpr const char* kDefaultInstanceUser = "nobody";

struct ControllerInfo {
  std::string version;
  pid_t pid = 0;
  std::string state_dir;
  std::string socket_path;
  int64_t started_ms = 0;
  common::CpuSet reserved_cpus;
};

class ControlHandlers {
 public:
  // `pools`: the managed PHP pools' runtime; null runs no managed pools.
  ControlHandlers(state::StateStore& store, InstanceRuntime& runtime, ControllerInfo info,
                  PoolRuntime* pools = nullptr);

  // Where instance.metrics and the status lines read from (null: they report nothing).
  void setMetrics(MetricsCollector* metrics) { metrics_ = metrics; }

  // Registers a handler for every op above on a scalwsctl connection.
  void registerOn(ipc::Endpoint& endpoint);

  // One request, as the endpoint hands it over (public for tests).
  void handle(const std::string& op, const ipc::Json& args, ipc::Replier replier);

 private:
  void status(ipc::Replier replier);
  void cpuList(ipc::Replier replier);
  void instanceList(ipc::Replier replier);
  void instanceShow(const ipc::Json& args, ipc::Replier replier);
  void instanceLogs(const ipc::Json& args, ipc::Replier replier);
  void instanceMetrics(const ipc::Json& args, ipc::Replier replier);
  void instanceAdd(const ipc::Json& args, ipc::Replier replier);
  void instanceSet(const ipc::Json& args, ipc::Replier replier);
  void instanceRemove(const ipc::Json& args, ipc::Replier replier);
  void instanceAction(const std::string& op, const ipc::Json& args, ipc::Replier replier);

  // The config in args, loaded, and checked against every other instance's addresses.
  common::Result<std::string> checkedConfig(const std::string& name, const ipc::Json& args,
                                            std::string* config_path);
  ipc::Json summary(const state::InstanceRecord& record) const;
  // php_pools, unbound_pools and whether the running pools differ from the stored ones.
  void addPoolBindings(const state::InstanceRecord& record, ipc::Json& out);
  // Replies SUMMARY of `name` as stored now, or the error.
  void replySummary(const std::string& name, ipc::Replier replier);

  state::StateStore& store_;
  InstanceRuntime& runtime_;
  ControllerInfo info_;
  MetricsCollector* metrics_ = nullptr;
  PoolRuntime* pool_runtime_;
  PoolHandlers pools_;
};

ipc::Json eventJson(const state::EventRecord& event);

}  // namespace scalws::controller
