// MetricsHttpServer: the controller's Prometheus endpoint (`--metrics-listen ADDR`, off by
// default). A deliberately tiny HTTP/1.1 responder on the controller's loop:
// `GET /metrics` (or HEAD) answers render()'s text; any other path is 404, any other method
// 405. One request per connection: the head is read (at most kMaxRequestBytes, within
// kRequestTimeoutMs), the answer is written with `Connection: close`, the write side is
// shut down and what the client still sends is read and dropped until it closes (or the
// deadline), so closing never resets the answer away. At most kMaxConnections at once;
// beyond that a connection is closed at once.
//
// render() runs on the loop thread, for each scrape. Destroying the server (or close())
// stops listening and drops open connections; libuv frees their memory once the loop runs.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "common/status.h"

namespace scalws::controller {

class MetricsHttpServer {
 public:
  using Render = std::function<std::string()>;

  static constexpr size_t kMaxRequestBytes = 8192;
  static constexpr uint64_t kRequestTimeoutMs = 5000;
  static constexpr size_t kMaxConnections = 16;

  // `address`: "127.0.0.1:9145", "[::1]:9145" (a literal address, as in [[listen]]).
  static common::Result<std::unique_ptr<MetricsHttpServer>> open(uv_loop_t* loop,
                                                                 const std::string& address,
                                                                 Render render);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  void close();
  uint16_t port() const { return port_; }
  size_t openConnections() const { return connections_.size(); }

  struct Connection;  // one client, internal to the .cpp

 private:
  MetricsHttpServer(uv_loop_t* loop, Render render) : loop_(loop), render_(std::move(render)) {}
  static void onConnection(uv_stream_t* server, int status);
  void answer(Connection& c);
  void drop(Connection* c);

  uv_loop_t* loop_;
  Render render_;
  uv_tcp_t* listener_ = nullptr;  // freed by its close callback
  uint16_t port_ = 0;
  std::set<Connection*> connections_;
};

// "GET /metrics HTTP/1.1\r\n..." -> the status line and body to send, given the text.
// Pure, for tests: {status code, reason, body}.
struct MetricsHttpAnswer {
  int status = 0;
  std::string reason;
  std::string content_type;
  std::string body;
  bool head = false;  // HEAD: headers only
};
MetricsHttpAnswer metricsHttpAnswer(std::string_view request_head,
                                    const MetricsHttpServer::Render& render);

}  // namespace scalws::controller
