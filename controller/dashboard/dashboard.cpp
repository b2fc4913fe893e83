#include "controller/dashboard/dashboard.h"

#include "controller/dashboard/dashboard_page.h"

namespace scalws::controller::dashboard {

using http::HttpAnswer;
using http::HttpRequest;

namespace {

HttpAnswer asset(std::string_view body, const char* type) {
  HttpAnswer a;
  a.content_type = type;
  a.body = std::string(body);
  // Embedded in the binary: it changes only with the controller, so revalidate each time.
  a.headers.emplace_back("Cache-Control", "no-cache");
  return a;
}

}  // namespace

HttpAnswer dashboardAnswer(const HttpRequest& request,
                           const std::function<HttpAnswer(const HttpRequest&)>& api) {
  HttpAnswer a;
  if (request.method != "GET" && request.method != "HEAD") {
    a = HttpAnswer::error(405, "Method Not Allowed", "read-only: GET and HEAD only\n");
    a.headers.emplace_back("Allow", "GET, HEAD");
  } else if (request.path == "/" || request.path == "/index.html") {
    a = asset(pageHtml(), "text/html; charset=utf-8");
  } else if (request.path == "/dashboard.css") {
    a = asset(pageCss(), "text/css; charset=utf-8");
  } else if (request.path == "/dashboard.js") {
    a = asset(pageScript(), "text/javascript; charset=utf-8");
  } else if (request.path.rfind("/api/v1/", 0) == 0) {
    a = api(request);
    a.headers.emplace_back("Cache-Control", "no-store");
  } else {
    a = HttpAnswer::error(404, "Not Found", "not found\n");
  }
  a.head = request.head();
  addSecurityHeaders(a);
  return a;
}

common::Result<std::unique_ptr<Dashboard>> Dashboard::open(
    uv_loop_t* loop, const std::string& address, std::optional<common::auth::Htpasswd> users,
    ControlHandlers& handlers, state::StateStore& store) {
  std::unique_ptr<Dashboard> d(new Dashboard(handlers, store));
  if (users) d->auth_ = std::make_unique<DashboardAuth>(std::move(*users));
  Dashboard* self = d.get();
  SCALWS_ASSIGN_OR_RETURN(
      d->server_, http::HttpServer::open(
                      loop, address, "--dashboard-listen",
                      [self](const HttpRequest& request) {
                        return dashboardAnswer(
                            request, [self](const HttpRequest& r) { return self->api_.answer(r); });
                      },
                      d->auth_.get()));
  return d;
}

}  // namespace scalws::controller::dashboard
