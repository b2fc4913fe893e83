// Controller: the metrics collector and its one-second timer (which checks the state disk
// too), the Prometheus endpoint and the dashboard.
#include "common/log.h"
#include "controller/controller.h"
#include "controller/metrics/metrics_prometheus.h"

namespace scalws::controller {

using common::Result;
using common::Status;

Status Controller::startMetrics() {
  metrics_ = std::make_unique<MetricsCollector>(store_, MetricsCollector::Options());
  metrics_timer_ = new uv_timer_t;
  uv_timer_init(&loop_, metrics_timer_);
  metrics_timer_->data = this;
  uv_timer_start(
      metrics_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<Controller*>(t->data);
        if (self->state_disk_) self->state_disk_->check();
        self->metrics_->tick();
      },
      1000, 1000);
  if (options_.metrics_listen.empty()) return common::okStatus();
  Result<std::unique_ptr<MetricsHttpServer>> http = MetricsHttpServer::open(
      &loop_, options_.metrics_listen, [this] { return renderPrometheusText(); });
  if (!http.ok()) return http.status();
  metrics_http_ = std::move(http).value();
  LOG_INFO("Prometheus metrics at http://%s/metrics", options_.metrics_listen.c_str());
  return common::okStatus();
}

Status Controller::startDashboard() {
  if (options_.dashboard_listen.empty()) return common::okStatus();
  std::optional<common::auth::Htpasswd> users;
  if (!options_.dashboard_auth.empty()) {
    Result<common::auth::Htpasswd> loaded = common::auth::Htpasswd::load(options_.dashboard_auth);
    if (!loaded.ok())
      return common::invalidArgument("--dashboard-auth: " + loaded.status().message());
    users = std::move(loaded).value();
  }
  Result<std::unique_ptr<dashboard::Dashboard>> d = dashboard::Dashboard::open(
      &loop_, options_.dashboard_listen, std::move(users), *handlers_, store_);
  if (!d.ok()) return d.status();
  dashboard_ = std::move(d).value();
  LOG_INFO("dashboard at http://%s/%s", options_.dashboard_listen.c_str(),
           options_.dashboard_auth.empty() ? "" : " (credentials from --dashboard-auth)");
  return common::okStatus();
}

std::string Controller::renderPrometheusText() const {
  std::vector<PrometheusInstance> list;
  for (auto& [name, total] : metrics_->totals()) {
    list.push_back({name, total, metrics_->liveWorkers(name), metrics_->upstreamTotals(name)});
  }
  return renderPrometheus(list) + (shared_ ? shared_->prometheus() : "");
}

}  // namespace scalws::controller
