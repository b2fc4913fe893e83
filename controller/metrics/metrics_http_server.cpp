#include "controller/metrics/metrics_http_server.h"

#include <cstring>

#include "common/config/listen_address.h"
#include "common/log.h"
#include "controller/metrics/metrics_prometheus.h"

namespace scalws::controller {

using common::Result;
using common::Status;

struct MetricsHttpServer::Connection {
  enum class State { kReading, kWriting, kDraining };
  MetricsHttpServer* server = nullptr;  // null once the server let go of it
  uv_tcp_t tcp{};
  uv_timer_t timer{};
  uv_write_t write{};
  uv_shutdown_t shutdown{};
  State state = State::kReading;
  std::string in;
  std::string out;
  int open_handles = 0;
  bool closing = false;
  bool peer_done = false;  // EOF while our answer was still being written
};

namespace {

void onHandleClosed(uv_handle_t* handle) {
  auto* c = static_cast<MetricsHttpServer::Connection*>(handle->data);
  if (--c->open_handles == 0) delete c;
}

void closeConnection(MetricsHttpServer::Connection* c) {
  if (c->closing) return;
  c->closing = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), onHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&c->timer), onHandleClosed);
}

void onAlloc(uv_handle_t*, size_t suggested, uv_buf_t* buf) {
  size_t size = std::min<size_t>(suggested, 4096);
  buf->base = new char[size];
  buf->len = size;
}

}  // namespace

MetricsHttpAnswer metricsHttpAnswer(std::string_view head,
                                    const MetricsHttpServer::Render& render) {
  MetricsHttpAnswer a;
  a.content_type = "text/plain; charset=utf-8";
  size_t eol = head.find_first_of("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0) {
    a.status = 400;
    a.reason = "Bad Request";
    a.body = "bad request\n";
    return a;
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  a.head = method == "HEAD";
  if (method != "GET" && method != "HEAD") {
    a.status = 405;
    a.reason = "Method Not Allowed";
    a.body = "only GET\n";
    return a;
  }
  if (target != "/metrics") {
    a.status = 404;
    a.reason = "Not Found";
    a.body = "try /metrics\n";
    return a;
  }
  a.status = 200;
  a.reason = "OK";
  a.content_type = std::string(kPrometheusContentType);
  a.body = render();
  return a;
}

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::open(uv_loop_t* loop,
                                                                   const std::string& address,
                                                                   Render render) {
  Result<common::config::ListenAddress> parsed = common::config::parseListenAddress(address);
  if (!parsed.ok()) {
    return common::invalidArgument("--metrics-listen " + address + ": " +
                                   parsed.status().message());
  }
  sockaddr_storage addr{};
  int rc =
      parsed->v6
          ? uv_ip6_addr(parsed->host.c_str(), parsed->port, reinterpret_cast<sockaddr_in6*>(&addr))
          : uv_ip4_addr(parsed->host.c_str(), parsed->port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) return common::invalidArgument("--metrics-listen " + address + ": bad address");
  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer(loop, std::move(render)));
  server->listener_ = new uv_tcp_t;
  uv_tcp_init(loop, server->listener_);
  server->listener_->data = server.get();
  rc = uv_tcp_bind(server->listener_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0)
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(server->listener_), 64,
                   &MetricsHttpServer::onConnection);
  if (rc != 0) {
    Status failed(common::StatusCode::kIoError,
                  "cannot listen on " + address + " for metrics: " + uv_strerror(rc));
    server->close();
    return failed;
  }
  sockaddr_storage bound{};
  int len = sizeof(bound);
  uv_tcp_getsockname(server->listener_, reinterpret_cast<sockaddr*>(&bound), &len);
  server->port_ =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  close();
}

void MetricsHttpServer::close() {
  if (listener_ != nullptr) {
    listener_->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(listener_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
    listener_ = nullptr;
  }
  for (Connection* c : connections_) {
    c->server = nullptr;
    closeConnection(c);
  }
  connections_.clear();
}

void MetricsHttpServer::drop(Connection* c) {
  if (c->server != nullptr) c->server->connections_.erase(c);
  c->server = nullptr;
  closeConnection(c);
}

void MetricsHttpServer::onConnection(uv_stream_t* listener, int status) {
  auto* self = static_cast<MetricsHttpServer*>(listener->data);
  if (self == nullptr || status < 0) return;
  auto* c = new Connection;
  c->server = self;
  uv_tcp_init(self->loop_, &c->tcp);
  uv_timer_init(self->loop_, &c->timer);
  c->tcp.data = c;
  c->timer.data = c;
  c->open_handles = 2;
  if (uv_accept(listener, reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0 ||
      self->connections_.size() >= kMaxConnections) {
    c->server = nullptr;
    closeConnection(c);
    return;
  }
  self->connections_.insert(c);
  uv_timer_start(
      &c->timer,
      [](uv_timer_t* t) {
        auto* conn = static_cast<Connection*>(t->data);
        if (conn->server != nullptr) conn->server->drop(conn);
      },
      kRequestTimeoutMs, 0);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp), onAlloc,
                [](uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
                  std::unique_ptr<char[]> owned(buf->base);
                  auto* conn = static_cast<Connection*>(stream->data);
                  if (conn->server == nullptr) return;
                  if (n == UV_EOF && conn->state == Connection::State::kWriting) {
                    conn->peer_done = true;  // the answer goes out first
                    return;
                  }
                  if (n < 0) return conn->server->drop(conn);              // EOF or error
                  if (conn->state != Connection::State::kReading) return;  // drained and dropped
                  conn->in.append(buf->base, static_cast<size_t>(n));
                  bool complete = conn->in.find("\r\n\r\n") != std::string::npos ||
                                  conn->in.find("\n\n") != std::string::npos;
                  if (complete || conn->in.size() >= kMaxRequestBytes) conn->server->answer(*conn);
                });
}

void MetricsHttpServer::answer(Connection& c) {
  MetricsHttpAnswer a;
  bool complete =
      c.in.find("\r\n\r\n") != std::string::npos || c.in.find("\n\n") != std::string::npos;
  if (complete) {
    a = metricsHttpAnswer(c.in, render_);
  } else {
    a.status = 431;
    a.reason = "Request Header Fields Too Large";
    a.content_type = "text/plain; charset=utf-8";
    a.body = "request too large\n";
  }
  c.state = Connection::State::kWriting;
  c.in.clear();
  c.out = "HTTP/1.1 " + std::to_string(a.status) + " " + a.reason +
          "\r\nContent-Type: " + a.content_type +
          "\r\nContent-Length: " + std::to_string(a.body.size()) +
          (a.status == 405 ? "\r\nAllow: GET, HEAD" : "") + "\r\nConnection: close\r\n\r\n";
  if (!a.head) c.out += a.body;
  uv_buf_t buf = uv_buf_init(c.out.data(), static_cast<unsigned int>(c.out.size()));
  c.write.data = &c;
  int rc = uv_write(
      &c.write, reinterpret_cast<uv_stream_t*>(&c.tcp), &buf, 1, [](uv_write_t* req, int status) {
        auto* conn = static_cast<Connection*>(req->data);
        if (conn->server == nullptr) return;
        if (status < 0 || conn->peer_done) return conn->server->drop(conn);
        conn->state = Connection::State::kDraining;
        conn->shutdown.data = conn;
        int shut = uv_shutdown(&conn->shutdown, reinterpret_cast<uv_stream_t*>(&conn->tcp),
                               [](uv_shutdown_t*, int) {});
        if (shut != 0) conn->server->drop(conn);
      });
  if (rc != 0) drop(&c);
}

}  // namespace scalws::controller
