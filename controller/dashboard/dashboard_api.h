// DashboardApi: the JSON behind the dashboard page, under /api/v1/ (GET or HEAD; the
// Dashboard answers other methods). Everything that scalwsctl also shows comes from
// ControlHandlers::read, the code that answers `scalwsctl --json`, so both tell the same.
// Times are UTC: Unix ms, as in the control API.
//
//   /api/v1/overview     {api_version:1, now_ms, controller:{version, pid, started_ms,
//                        uptime_ms}, host:{host_cpus, reserved_cpus, cpus:[cpu.list's]},
//                        instances:[INSTANCE], pools:[pool.list's POOL], events:[EVENT]
//                        (the last kOverviewEvents, newest first)}
//     INSTANCE = instance.show's SUMMARY, processes, php_pools, unbound_pools and
//                reload_pending, plus workers (processes ready), restarts (their sum),
//                now (instance.metrics' FIGURES over about the last 10 s; null when the
//                controller collects none), upstreams (instance.show's: [{name,
//                servers:[{address, backup, loops, loops_down, down_since_ms, failures,
//                active, idle, requests, ...}]}], without latency histograms), cache and
//                apps: null when instance.show has none (the page shows a section for
//                each that is a non-empty list or an object)
//   /api/v1/events?limit=N               {events:[EVENT]}; N 1..1000, default 50
//   /api/v1/pools                        pool.list
//   /api/v1/instances/NAME               instance.show (events: 10)
//   /api/v1/instances/NAME/metrics?since_ms=N    instance.metrics
//   /api/v1/instances/NAME/series?minutes=N      SERIES of the last N minutes (1..1440,
//                        default 60) from the 10 s rollups:
//     SERIES = {name, step_ms:10000, from_ms, to_ms, t:[bucket start ms],
//               requests_per_s:[], error_rate_4xx:[], error_rate_5xx:[], p99_us:[],
//               cpu_percent:[], rss_bytes:[]} (one element per stored bucket, oldest
//               first; buckets without a row are absent: the chart leaves a gap)
//   EVENT = {id, time_ms, instance (null: the host's), kind, message}
// Errors: {error:{code, message}} (code as in the control API: not_found, invalid_argument,
// ...) with 400 (bad argument), 404 (no such instance or path),
// 500.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "controller/http/http_server.h"
#include "controller/server/control_handlers.h"
#include "controller/state/metrics_row.h"
#include "controller/state/state_store.h"
#include "ipc/message.h"

namespace scalws::controller::dashboard {

inline constexpr int kOverviewEvents = 20;

// Which API call a path names. Pure.
struct ApiRoute {
  enum class Kind { kOverview, kEvents, kPools, kInstance, kInstanceMetrics, kSeries };
  Kind kind = Kind::kOverview;
  std::string instance;  // the kInstance* and kSeries ones
  uint64_t number = 0;   // limit, since_ms or minutes (defaults filled in)
};
// `path` starts with /api/v1/. kNotFound for an unknown path, kInvalidArgument for a bad
// query value.
common::Result<ApiRoute> routeApi(std::string_view path, std::string_view query);

// SERIES from 10 s rows. Pure.
ipc::Json seriesJson(const std::string& name, int64_t from_ms, int64_t to_ms,
                     const std::vector<state::MetricsRow>& rows);

// INSTANCE from instance.show's reply and instance.metrics' (null: none). Pure.
ipc::Json instanceOverviewJson(const ipc::Json& show, const ipc::Json& metrics);

// EVENT. Pure.
ipc::Json dashboardEventJson(const state::EventRecord& event);

class DashboardApi {
 public:
  DashboardApi(ControlHandlers& handlers, state::StateStore& store,
               std::function<int64_t()> clock = nullptr);

  // The answer to a GET or HEAD of a path under /api/v1/.
  http::HttpAnswer answer(const http::HttpRequest& request);

  common::Result<ipc::Json> call(const ApiRoute& route);
  common::Result<ipc::Json> overview();

 private:
  common::Result<ipc::Json> events(int limit);
  common::Result<ipc::Json> series(const std::string& name, int minutes);

  ControlHandlers& handlers_;
  state::StateStore& store_;
  std::function<int64_t()> clock_;  // Unix ms
};

}  // namespace scalws::controller::dashboard
