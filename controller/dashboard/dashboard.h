// Dashboard: the controller's read-only web page (`--dashboard-listen ADDR`, off by
// default), served by the controller's small HTTP server (http/http_server.h) on the
// controller's loop.
//
//   /                the page (dashboard_page.h); /dashboard.css, /dashboard.js its parts
//   /api/v1/...      the JSON the page reads (dashboard_api.h)
// GET and HEAD only: any other method is 405 (with Allow), any other path 404. Every
// answer carries addSecurityHeaders' (a Content-Security-Policy allowing nothing but this
// origin and no inline code, nosniff, no framing); the API's also `Cache-Control:
// no-store`. With `users` (--dashboard-auth), every request needs HTTP Basic credentials
// they accept (dashboard_auth.h); the controller refuses to start with a non-loopback
// address and no users (controller_options.h).
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "controller/dashboard/dashboard_api.h"
#include "controller/dashboard/dashboard_auth.h"
#include "controller/http/http_server.h"

namespace scalws::controller::dashboard {

// The answer to one request, given what answers under /api/v1/. Pure but for `api`.
http::HttpAnswer dashboardAnswer(
    const http::HttpRequest& request,
    const std::function<http::HttpAnswer(const http::HttpRequest&)>& api);

class Dashboard {
 public:
  static common::Result<std::unique_ptr<Dashboard>> open(
      uv_loop_t* loop, const std::string& address, std::optional<common::auth::Htpasswd> users,
      ControlHandlers& handlers, state::StateStore& store);
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;

  void close() { server_->close(); }
  uint16_t port() const { return server_->port(); }

 private:
  Dashboard(ControlHandlers& handlers, state::StateStore& store) : api_(handlers, store) {}

  DashboardApi api_;
  std::unique_ptr<DashboardAuth> auth_;       // null: no credentials asked
  std::unique_ptr<http::HttpServer> server_;  // declared last: closed before auth_ goes
};

}  // namespace scalws::controller::dashboard
