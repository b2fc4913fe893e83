#include "controller/metrics/metrics_http_server.h"

#include "controller/metrics/metrics_prometheus.h"

namespace scalws::controller {

using common::Result;
using http::HttpAnswer;

HttpAnswer metricsAnswer(const http::HttpRequest& request,
                         const MetricsHttpServer::Render& render) {
  HttpAnswer a;
  a.head = request.head();
  if (request.method != "GET" && request.method != "HEAD") {
    a = HttpAnswer::error(405, "Method Not Allowed", "only GET\n");
    a.headers.emplace_back("Allow", "GET, HEAD");
    return a;
  }
  if (request.path != "/metrics") {
    a = HttpAnswer::error(404, "Not Found", "try /metrics\n");
    a.head = request.head();
    return a;
  }
  a.content_type = std::string(kPrometheusContentType);
  a.body = render();
  return a;
}

MetricsHttpAnswer metricsHttpAnswer(std::string_view head,
                                    const MetricsHttpServer::Render& render) {
  Result<http::HttpRequest> request = http::parseRequestHead(head);
  if (!request.ok()) return HttpAnswer::error(400, "Bad Request", "bad request\n");
  return metricsAnswer(*request, render);
}

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::open(uv_loop_t* loop,
                                                                   const std::string& address,
                                                                   Render render) {
  SCALWS_ASSIGN_OR_RETURN(
      std::unique_ptr<http::HttpServer> server,
      http::HttpServer::open(loop, address, "--metrics-listen",
                             [render = std::move(render)](const http::HttpRequest& request) {
                               return metricsAnswer(request, render);
                             }));
  return std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(std::move(server)));
}

}  // namespace scalws::controller
