// MetricsHttpServer: the controller's Prometheus endpoint (`--metrics-listen ADDR`, off by
// default): the controller's small HTTP server (http/http_server.h, which states how a
// connection is read, answered and closed) with one route: `GET /metrics` (or HEAD)
// answers render()'s text; any other path is 404, any other method 405.
//
// render() runs on the loop thread, for each scrape. Destroying the server (or close())
// stops listening and drops open connections; libuv frees their memory once the loop runs.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "controller/http/http_server.h"

namespace scalws::controller {

class MetricsHttpServer {
 public:
  using Render = std::function<std::string()>;

  static constexpr size_t kMaxRequestBytes = http::HttpServer::kMaxRequestBytes;
  static constexpr uint64_t kRequestTimeoutMs = http::HttpServer::kRequestTimeoutMs;
  static constexpr size_t kMaxConnections = http::HttpServer::kMaxConnections;

  // `address`: "127.0.0.1:9145", "[::1]:9145" (a literal address, as in [[listen]]).
  static common::Result<std::unique_ptr<MetricsHttpServer>> open(uv_loop_t* loop,
                                                                 const std::string& address,
                                                                 Render render);
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  void close() { server_->close(); }
  uint16_t port() const { return server_->port(); }
  size_t openConnections() const { return server_->openConnections(); }

 private:
  explicit MetricsHttpServer(std::unique_ptr<http::HttpServer> server)
      : server_(std::move(server)) {}
  std::unique_ptr<http::HttpServer> server_;
};

// "GET /metrics HTTP/1.1\r\n..." -> the answer to send, given the text. Pure, for tests.
using MetricsHttpAnswer = http::HttpAnswer;
MetricsHttpAnswer metricsHttpAnswer(std::string_view request_head,
                                    const MetricsHttpServer::Render& render);
// The same, for a request already parsed.
http::HttpAnswer metricsAnswer(const http::HttpRequest& request,
                               const MetricsHttpServer::Render& render);

}  // namespace scalws::controller
