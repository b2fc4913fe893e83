#include "controller/dashboard/dashboard_api.h"

#include <charconv>
#include <cmath>

#include "common/metrics/latency_buckets.h"
#include "controller/child_process.h"

namespace scalws::controller::dashboard {

using common::Result;
using common::Status;
using ipc::Json;

namespace {

constexpr std::string_view kPrefix = "/api/v1/";
constexpr uint64_t kMaxEvents = 1000;
constexpr uint64_t kMaxSeriesMinutes = 24 * 60;  // the 10 s rows are kept a day

double rounded(double v) {
  return std::round(v * 10'000.0) / 10'000.0;
}

// A number from the query, `fallback` when absent, within [lo, hi].
Result<uint64_t> queryNumber(std::string_view query, std::string_view key, uint64_t fallback,
                             uint64_t lo, uint64_t hi) {
  bool found = false;
  std::string_view text = http::queryValue(query, key, &found);
  if (!found) return fallback;
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < lo || n > hi) {
    return common::invalidArgument(std::string(key) + " must be a number from " +
                                   std::to_string(lo) + " to " + std::to_string(hi));
  }
  return n;
}

int httpStatusOf(const Status& s) {
  switch (s.code()) {
    case common::StatusCode::kInvalidArgument:
      return 400;
    case common::StatusCode::kNotFound:
      return 404;
    default:
      return 500;
  }
}

const char* reasonOf(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    default:
      return "Internal Server Error";
  }
}

}  // namespace

Result<ApiRoute> routeApi(std::string_view path, std::string_view query) {
  if (path.rfind(kPrefix, 0) != 0) return common::notFound("no such API path");
  std::string_view rest = path.substr(kPrefix.size());
  ApiRoute r;
  if (rest == "overview") {
    r.kind = ApiRoute::Kind::kOverview;
    return r;
  }
  if (rest == "events") {
    r.kind = ApiRoute::Kind::kEvents;
    SCALWS_ASSIGN_OR_RETURN(r.number, queryNumber(query, "limit", 50, 1, kMaxEvents));
    return r;
  }
  if (rest == "pools") {
    r.kind = ApiRoute::Kind::kPools;
    return r;
  }
  constexpr std::string_view kInstances = "instances/";
  if (rest.rfind(kInstances, 0) != 0) return common::notFound("no such API path");
  rest.remove_prefix(kInstances.size());
  size_t slash = rest.find('/');
  r.instance = std::string(rest.substr(0, slash));
  if (r.instance.empty()) return common::notFound("no such API path");
  std::string_view what = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (slash == std::string_view::npos) {
    r.kind = ApiRoute::Kind::kInstance;
  } else if (what == "metrics") {
    r.kind = ApiRoute::Kind::kInstanceMetrics;
    SCALWS_ASSIGN_OR_RETURN(
        r.number, queryNumber(query, "since_ms", 5 * 60'000, 1000, 31ULL * 24 * 3600 * 1000));
  } else if (what == "series") {
    r.kind = ApiRoute::Kind::kSeries;
    SCALWS_ASSIGN_OR_RETURN(r.number, queryNumber(query, "minutes", 60, 1, kMaxSeriesMinutes));
  } else {
    return common::notFound("no such API path");
  }
  return r;
}

Json seriesJson(const std::string& name, int64_t from_ms, int64_t to_ms,
                const std::vector<state::MetricsRow>& rows) {
  Json t = Json::array(), rps = Json::array(), e4 = Json::array(), e5 = Json::array(),
       p99 = Json::array(), cpu = Json::array(), rss = Json::array();
  const double secs = static_cast<double>(state::bucketMs(state::MetricsResolution::k10s)) / 1000;
  for (const state::MetricsRow& row : rows) {
    const common::metrics::MetricsSnapshot& f = row.figures;
    uint64_t requests = f.requests();
    auto fraction = [requests](uint64_t n) {
      return requests == 0 ? 0.0 : rounded(static_cast<double>(n) / static_cast<double>(requests));
    };
    t.push_back(row.bucket_ms);
    rps.push_back(rounded(static_cast<double>(requests) / secs));
    e4.push_back(fraction(f.requests_by_class[3]));
    e5.push_back(fraction(f.requests_by_class[4]));
    p99.push_back(common::metrics::latencyPercentileUs(f.latency, 0.99));
    cpu.push_back(rounded(static_cast<double>(f.cpu_us) / (secs * 1e6) * 100.0));
    rss.push_back(f.rss_bytes);
  }
  return Json{{"name", name},
              {"step_ms", state::bucketMs(state::MetricsResolution::k10s)},
              {"from_ms", from_ms},
              {"to_ms", to_ms},
              {"t", t},
              {"requests_per_s", rps},
              {"error_rate_4xx", e4},
              {"error_rate_5xx", e5},
              {"p99_us", p99},
              {"cpu_percent", cpu},
              {"rss_bytes", rss}};
}

Json instanceOverviewJson(const Json& show, const Json& metrics) {
  Json out = Json::object();
  for (const char* key :
       {"name", "mode", "cpus", "assigned_cpus", "shared_cpus", "user", "desired", "status",
        "reason", "process_count", "php_pools", "unbound_pools", "reload_pending"}) {
    out[key] = show.value(key, Json(nullptr));
  }
  Json processes = Json::array();
  int workers = 0;
  uint64_t restarts = 0;
  for (const Json& p : show.value("processes", Json::array())) {
    Json slim = Json::object();
    for (const char* key : {"slot", "pid", "state", "cpus", "started_ms", "restarts", "attached"}) {
      slim[key] = p.value(key, Json(nullptr));
    }
    if (p.value("state", "") == "ready") ++workers;
    restarts += p.value("restarts", uint64_t{0});
    processes.push_back(std::move(slim));
  }
  out["processes"] = processes;
  out["workers"] = workers;
  out["restarts"] = restarts;
  out["now"] = metrics.is_object() ? metrics.value("now", Json(nullptr)) : Json(nullptr);
  // What instance.show has of these, null when it has none. The proxy's upstreams without
  // their latency histograms (the page shows state and counts).
  Json upstreams = show.value("upstreams", Json(nullptr));
  if (upstreams.is_array()) {
    for (Json& u : upstreams) {
      if (!u.is_object() || !u.contains("servers") || !u["servers"].is_array()) continue;
      for (Json& server : u["servers"]) {
        if (server.is_object()) server.erase("latency_buckets");
      }
    }
  }
  out["upstreams"] = upstreams;
  // Each cache's size (instance.show) with the hit rate of the last ~10 s (metrics).
  Json caches = show.value("caches", Json::array());
  Json hit_rate = nullptr;
  if (out["now"].is_object() && out["now"].contains("proxy_cache")) {
    hit_rate = out["now"]["proxy_cache"].value("hit_rate", Json(nullptr));
  }
  if (caches.is_array()) {
    for (Json& c : caches) {
      if (c.is_object()) c["hit_rate"] = hit_rate;
    }
  }
  out["caches"] = caches;
  out["apps"] = show.value("apps", Json(nullptr));
  // The shared addresses it claims names on, as instance.show has them without the fronts'
  // sandbox reports (the page shows who is there, the fronts' state and the hand-offs).
  Json shared = show.value("shared", Json(nullptr));
  if (shared.is_array()) {
    for (Json& address : shared) {
      if (!address.is_object() || !address.contains("fronts") || !address["fronts"].is_array()) {
        continue;
      }
      for (Json& front : address["fronts"]) {
        if (front.is_object()) front.erase("sandbox");
      }
    }
  }
  out["shared"] = shared;
  return out;
}

Json dashboardEventJson(const state::EventRecord& event) {
  Json out = eventJson(event);
  out["instance"] = event.instance ? Json(*event.instance) : Json(nullptr);
  return out;
}

DashboardApi::DashboardApi(ControlHandlers& handlers, state::StateStore& store,
                           std::function<int64_t()> clock)
    : handlers_(handlers), store_(store), clock_(std::move(clock)) {
  if (!clock_) clock_ = wallMs;
}

http::HttpAnswer DashboardApi::answer(const http::HttpRequest& request) {
  Result<ApiRoute> route = routeApi(request.path, request.query);
  Result<Json> body = route.ok() ? call(*route) : Result<Json>(route.status());
  http::HttpAnswer a;
  a.head = request.head();
  a.content_type = "application/json";
  if (body.ok()) {
    a.body = body->dump(-1, ' ', false, Json::error_handler_t::replace);
  } else {
    a.status = httpStatusOf(body.status());
    Json error = {{"error",
                   {{"code", std::string(ipc::wireCodeForStatus(body.status().code()))},
                    {"message", body.status().message()}}}};
    a.body = error.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  a.reason = reasonOf(a.status);
  a.body += "\n";
  return a;
}

Result<Json> DashboardApi::call(const ApiRoute& route) {
  Json named = {{"name", route.instance}};
  switch (route.kind) {
    case ApiRoute::Kind::kOverview:
      return overview();
    case ApiRoute::Kind::kEvents:
      return events(static_cast<int>(route.number));
    case ApiRoute::Kind::kPools:
      return handlers_.read(ipc::op::kPoolList, Json::object());
    case ApiRoute::Kind::kInstance:
      return handlers_.read(ipc::op::kInstanceShow, named);
    case ApiRoute::Kind::kInstanceMetrics:
      named["since_ms"] = route.number;
      return handlers_.read(ipc::op::kInstanceMetrics, named);
    case ApiRoute::Kind::kSeries:
      return series(route.instance, static_cast<int>(route.number));
  }
  return common::internalError("unhandled route");
}

Result<Json> DashboardApi::overview() {
  SCALWS_ASSIGN_OR_RETURN(Json status, handlers_.read(ipc::op::kStatus, Json::object()));
  SCALWS_ASSIGN_OR_RETURN(Json cpus, handlers_.read(ipc::op::kCpuList, Json::object()));
  SCALWS_ASSIGN_OR_RETURN(Json list, handlers_.read(ipc::op::kInstanceList, Json::object()));
  SCALWS_ASSIGN_OR_RETURN(Json pools, handlers_.read(ipc::op::kPoolList, Json::object()));
  SCALWS_ASSIGN_OR_RETURN(Json recent, events(kOverviewEvents));
  Json instances = Json::array();
  for (const Json& summary : list["instances"]) {
    Json args = {{"name", summary["name"]}, {"events", uint64_t{0}}};
    Result<Json> show = handlers_.read(ipc::op::kInstanceShow, args);
    if (!show.ok()) {
      if (show.status().code() == common::StatusCode::kNotFound) continue;  // just removed
      return show.status();
    }
    args = {{"name", summary["name"]}, {"since_ms", uint64_t{60'000}}};
    Result<Json> metrics = handlers_.read(ipc::op::kInstanceMetrics, args);
    instances.push_back(instanceOverviewJson(*show, metrics.ok() ? *metrics : Json(nullptr)));
  }
  return Json{{"api_version", 1},
              {"now_ms", clock_()},
              {"controller",
               {{"version", status["version"]},
                {"pid", status["pid"]},
                {"started_ms", status["started_ms"]},
                {"uptime_ms", status["uptime_ms"]}}},
              {"host",
               {{"host_cpus", status["host_cpus"]},
                {"reserved_cpus", status["reserved_cpus"]},
                {"cpus", cpus["cpus"]}}},
              {"instances", instances},
              {"pools", pools["pools"]},
              {"events", recent["events"]}};
}

Result<Json> DashboardApi::events(int limit) {
  SCALWS_ASSIGN_OR_RETURN(std::vector<state::EventRecord> events,
                          store_.recentEvents(std::nullopt, limit));
  Json list = Json::array();
  for (const state::EventRecord& e : events) list.push_back(dashboardEventJson(e));
  return Json{{"events", list}};
}

Result<Json> DashboardApi::series(const std::string& name, int minutes) {
  SCALWS_ASSIGN_OR_RETURN(state::InstanceRecord record, store_.getInstance(name));
  int64_t to = clock_();
  int64_t from = to - static_cast<int64_t>(minutes) * 60'000;
  SCALWS_ASSIGN_OR_RETURN(
      std::vector<state::MetricsRow> rows,
      store_.listMetrics(record.name, state::MetricsResolution::k10s, from, to));
  return seriesJson(record.name, from, to, rows);
}

}  // namespace scalws::controller::dashboard
