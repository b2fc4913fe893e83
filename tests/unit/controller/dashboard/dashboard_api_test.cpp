// DashboardApi: its routes, the pure JSON shapers, and the calls over a real StateStore and
// ControlHandlers (a fake runtime): the figures are ControlHandlers::read's, the events and
// series the store's.
#include "controller/dashboard/dashboard_api.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "controller/state/state_store.h"
#include "tests/unit/controller/fake_accounts.h"
#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller::dashboard {
namespace {

using common::StatusCode;
using ipc::Json;

TEST(RouteApi, NamesEachCallWithItsDefaults) {
  auto r = routeApi("/api/v1/overview", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ApiRoute::Kind::kOverview);
  r = routeApi("/api/v1/events", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ApiRoute::Kind::kEvents);
  EXPECT_EQ(r->number, 50u);
  r = routeApi("/api/v1/events", "limit=7");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->number, 7u);
  r = routeApi("/api/v1/pools", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ApiRoute::Kind::kPools);
  r = routeApi("/api/v1/instances/web-1", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ApiRoute::Kind::kInstance);
  EXPECT_EQ(r->instance, "web-1");
  r = routeApi("/api/v1/instances/web-1/series", "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ApiRoute::Kind::kSeries);
  EXPECT_EQ(r->number, 60u);
  r = routeApi("/api/v1/instances/web-1/series", "minutes=5&x=1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->number, 5u);
  r = routeApi("/api/v1/instances/web-1/metrics", "since_ms=60000");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ApiRoute::Kind::kInstanceMetrics);
  EXPECT_EQ(r->number, 60000u);
}

TEST(RouteApi, UnknownPathsAre404AndBadNumbers400) {
  for (const char* path :
       {"/api/v1/", "/api/v1/overview/x", "/api/v2/overview", "/api/v1/instances/",
        "/api/v1/instances/a/logs", "/api/v1/instances/a/series/x"}) {
    auto r = routeApi(path, "");
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << path;
  }
  for (const char* query : {"minutes=0", "minutes=1441", "minutes=", "minutes=5m", "minutes=-1"}) {
    auto r = routeApi("/api/v1/instances/a/series", query);
    ASSERT_FALSE(r.ok()) << query;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << query;
  }
  EXPECT_FALSE(routeApi("/api/v1/events", "limit=1001").ok());
  EXPECT_FALSE(routeApi("/api/v1/instances/a/metrics", "since_ms=999").ok());
}

TEST(SeriesJson, OnePointPerRowWithRatesOfTheTenSeconds) {
  state::MetricsRow a;
  a.instance = "web";
  a.bucket_ms = 1'000'000;
  a.figures.requests_by_class = {0, 80, 0, 15, 5};  // 100 requests
  a.figures.latency[3] = 100;
  a.figures.cpu_us = 2'500'000;  // 25 % of a core over 10 s
  a.figures.rss_bytes = 4096;
  state::MetricsRow b = a;
  b.bucket_ms = 1'020'000;  // a bucket missing in between
  b.figures = {};
  Json s = seriesJson("web", 900'000, 1'030'000, {a, b});
  EXPECT_EQ(s["name"], "web");
  EXPECT_EQ(s["step_ms"], 10'000);
  EXPECT_EQ(s["from_ms"], 900'000);
  EXPECT_EQ(s["t"], Json::array({1'000'000, 1'020'000}));
  EXPECT_EQ(s["requests_per_s"], Json::array({10.0, 0.0}));
  EXPECT_EQ(s["error_rate_4xx"], Json::array({0.15, 0.0}));
  EXPECT_EQ(s["error_rate_5xx"], Json::array({0.05, 0.0}));
  EXPECT_EQ(s["cpu_percent"], Json::array({25.0, 0.0}));
  EXPECT_EQ(s["rss_bytes"], Json::array({4096, 0}));
  EXPECT_GT(s["p99_us"][0].get<uint64_t>(), 0u);
  EXPECT_EQ(s["p99_us"][1], 0);
}

TEST(InstanceOverviewJson, SlimsProcessesAndCountsWorkersAndRestarts) {
  Json show = {{"name", "web"},
               {"mode", "multi"},
               {"status", "running"},
               {"processes",
                Json::array({{{"slot", 0},
                              {"pid", 5},
                              {"state", "ready"},
                              {"restarts", 2},
                              {"sandbox", {{"big", 1}}}},
                             {{"slot", 1}, {"pid", 0}, {"state", "restarting"}, {"restarts", 3}}})},
               {"events", Json::array()}};
  Json metrics = {{"now", {{"requests_per_s", 12.5}}}};
  Json o = instanceOverviewJson(show, metrics);
  EXPECT_EQ(o["name"], "web");
  EXPECT_EQ(o["workers"], 1);
  EXPECT_EQ(o["restarts"], 5);
  EXPECT_FALSE(o["processes"][0].contains("sandbox"));
  EXPECT_EQ(o["now"]["requests_per_s"], 12.5);
  EXPECT_TRUE(o["upstreams"].is_null());
  EXPECT_EQ(o["caches"], Json::array());
  EXPECT_TRUE(o["apps"].is_null());
  // Each cache's size from show, the hit rate of the last seconds from the metrics.
  Json with_cache = show;
  with_cache["caches"] = Json::array({{{"name", "pages"}, {"entries", 3}}});
  with_cache["apps"] = Json::array({{{"name", "api"}, {"as", "api"}, {"state", "running"}}});
  Json cached = instanceOverviewJson(with_cache, {{"now", {{"proxy_cache", {{"hit_rate", 0.5}}}}}});
  EXPECT_EQ(cached["caches"][0]["entries"], 3);
  EXPECT_EQ(cached["caches"][0]["hit_rate"], 0.5);
  EXPECT_EQ(cached["apps"][0]["state"], "running");
  EXPECT_FALSE(o.contains("events"));
  EXPECT_TRUE(instanceOverviewJson(show, Json(nullptr))["now"].is_null());
  // The proxy's upstreams pass, without their histograms.
  show["upstreams"] =
      Json::array({{{"name", "api"},
                    {"servers", Json::array({{{"address", "127.0.0.1:9000"},
                                              {"failures", 2},
                                              {"latency_buckets", Json::array({1, 2, 3})}}})}}});
  o = instanceOverviewJson(show, metrics);
  EXPECT_EQ(o["upstreams"][0]["name"], "api");
  EXPECT_EQ(o["upstreams"][0]["servers"][0]["failures"], 2);
  EXPECT_FALSE(o["upstreams"][0]["servers"][0].contains("latency_buckets"));
  // Shared addresses pass, without the fronts' sandbox reports.
  EXPECT_TRUE(o["shared"].is_null());
  show["shared"] = Json::array(
      {{{"address", "127.0.0.1:443"},
        {"tls", true},
        {"fronts", Json::array({{{"slot", 0}, {"state", "ready"}, {"sandbox", {{"big", 1}}}}})},
        {"instances",
         Json::array({{{"name", "web"}, {"names", Json::array({"a.example"})}, {"handoffs", 7}},
                      {{"name", "other"}, {"default", true}, {"handoffs", 1}}})}}});
  o = instanceOverviewJson(show, metrics);
  EXPECT_EQ(o["shared"][0]["address"], "127.0.0.1:443");
  EXPECT_EQ(o["shared"][0]["fronts"][0]["state"], "ready");
  EXPECT_FALSE(o["shared"][0]["fronts"][0].contains("sandbox"));
  EXPECT_EQ(o["shared"][0]["instances"][0]["handoffs"], 7);
}

class StoppedRuntime : public InstanceRuntime {
 public:
  void instanceStored(const state::InstanceRecord&) override {}
  void start(const std::string&, Commit, Done done) override { done(common::okStatus()); }
  void stop(const std::string&, Done done) override { done(common::okStatus()); }
  void restart(const std::string&, Commit, Done done) override { done(common::okStatus()); }
  void reload(const std::string&, Done done) override { done(common::okStatus()); }
  void remove(const std::string&, Commit, Done done) override { done(common::okStatus()); }
  std::string runtimeState(const std::string&) const override { return "stopped"; }
  size_t processCount(const std::string&) const override { return 0; }
  Json processes(const std::string&) const override { return Json::array(); }
  std::optional<common::config::SiteConfig> runningSite(const std::string&) const override {
    return std::nullopt;
  }
  bool reloadPending(const std::string&) const override { return false; }
  std::optional<std::vector<ipc::PhpPoolGrant>> runningPools(const std::string&) const override {
    return std::nullopt;
  }
};

class DashboardApiTest : public ::testing::Test {
 protected:
  DashboardApiTest() {
    auto store = state::StateStore::open(state::StateStore::dbPath(dir_.path()),
                                         cpu::CpuAllocator(common::CpuSet{0, 1}));
    EXPECT_TRUE(store.ok()) << store.status().message();
    store_ = std::make_unique<state::StateStore>(std::move(*store));
    ControllerInfo info;
    info.version = "9.9-test";
    info.pid = ::getpid();
    info.started_ms = 1;
    handlers_ = std::make_unique<ControlHandlers>(*store_, runtime_, accounts_, info);
    api_ = std::make_unique<DashboardApi>(*handlers_, *store_, [this] { return now_; });
    state::NewInstance spec;
    spec.name = "web";
    spec.user = "nobody";
    spec.config = "[[listen]]\naddress = \"127.0.0.1:8080\"\n[[route]]\nrespond = {}\n";
    spec.config_path = "/etc/scalws/web.toml";
    EXPECT_TRUE(store_->addInstance(spec).ok());
  }

  http::HttpAnswer get(const std::string& target) {
    auto r = http::parseRequestHead("GET " + target + " HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(r.ok()) << target;
    return api_->answer(*r);
  }

  testing::TempDir dir_;
  StoppedRuntime runtime_;
  FakeAccounts accounts_;
  std::unique_ptr<state::StateStore> store_;
  std::unique_ptr<ControlHandlers> handlers_;
  std::unique_ptr<DashboardApi> api_;
  int64_t now_ = 10 * 60'000;
};

TEST_F(DashboardApiTest, OverviewIsTheControlHandlersReadsTogether) {
  http::HttpAnswer a = get("/api/v1/overview");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.content_type, "application/json");
  Json o = Json::parse(a.body);
  EXPECT_EQ(o["api_version"], 1);
  EXPECT_EQ(o["now_ms"], now_);
  EXPECT_EQ(o["controller"]["version"], "9.9-test");
  EXPECT_EQ(o["host"]["host_cpus"], "0-1");
  EXPECT_EQ(o["host"]["cpus"].size(), 2u);
  ASSERT_EQ(o["instances"].size(), 1u);
  Json inst = o["instances"][0];
  Json listed = handlers_->read(ipc::op::kInstanceList, Json::object())->at("instances")[0];
  for (auto& [key, value] : listed.items()) EXPECT_EQ(inst[key], value) << key;
  EXPECT_TRUE(inst["now"].is_null());  // no metrics collector here
  EXPECT_EQ(o["pools"], Json::array());
  ASSERT_GE(o["events"].size(), 1u);
  EXPECT_EQ(o["events"][0]["instance"], "web");
  EXPECT_EQ(o["events"][0]["kind"], "instance.added");
}

TEST_F(DashboardApiTest, SeriesReadsTheTenSecondRowsOfTheSpan) {
  state::MetricsRow old_row, row;
  old_row.instance = row.instance = "web";
  old_row.bucket_ms = 0;  // 10 minutes before now: outside a 5 minute span
  row.bucket_ms = now_ - 60'000;
  row.figures.requests_by_class = {0, 50, 0, 0, 0};
  ASSERT_TRUE(store_->insertMetrics(state::MetricsResolution::k10s, {{old_row, row}}).ok());
  http::HttpAnswer a = get("/api/v1/instances/web/series?minutes=5");
  ASSERT_EQ(a.status, 200) << a.body;
  Json s = Json::parse(a.body);
  EXPECT_EQ(s["t"], Json::array({row.bucket_ms}));
  EXPECT_EQ(s["requests_per_s"], Json::array({5.0}));
  EXPECT_EQ(s["from_ms"], now_ - 5 * 60'000);
  EXPECT_EQ(get("/api/v1/instances/web/series?minutes=11").status, 200);
  EXPECT_EQ(Json::parse(get("/api/v1/instances/web/series?minutes=11").body)["t"].size(), 2u);
}

TEST_F(DashboardApiTest, ErrorsAreJsonWithTheirStatus) {
  http::HttpAnswer a = get("/api/v1/instances/nope");
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(Json::parse(a.body)["error"]["code"], "not_found");
  EXPECT_EQ(get("/api/v1/instances/nope/series").status, 404);
  EXPECT_EQ(get("/api/v1/nothing").status, 404);
  a = get("/api/v1/events?limit=x");
  EXPECT_EQ(a.status, 400);
  EXPECT_FALSE(Json::parse(a.body)["error"]["message"].get<std::string>().empty());
  // instance.metrics without a collector: what scalwsctl would get, as a 500.
  EXPECT_EQ(get("/api/v1/instances/web/metrics").status, 500);
  EXPECT_EQ(Json::parse(get("/api/v1/events?limit=1").body)["events"].size(), 1u);
}

}  // namespace
}  // namespace scalws::controller::dashboard
