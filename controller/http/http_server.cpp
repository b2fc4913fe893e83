#include "controller/http/http_server.h"

#include <cstring>

#include "common/config/listen_address.h"
#include "ipc/uv_handle.h"

namespace scalws::controller::http {

using common::Result;
using common::Status;

struct HttpServer::Connection {
  enum class State { kReading, kChecking, kWriting, kDraining };
  HttpServer* server = nullptr;  // null once the server let go of it
  uv_tcp_t tcp{};
  uv_timer_t timer{};
  uv_write_t write{};
  uv_shutdown_t shutdown{};
  uv_work_t work{};
  State state = State::kReading;
  std::string in;
  std::string out;
  HttpRequest request;
  std::function<bool()> check;  // kChecking: runs on the thread pool
  bool allowed = false;         // the check's result
  int open_handles = 0;         // tcp, timer, and a check in flight
  bool closing = false;
  bool peer_done = false;  // EOF while our answer was still being written
};

namespace {

using Connection = HttpServer::Connection;

void release(Connection* c) {
  if (--c->open_handles == 0) delete c;
}

void onHandleClosed(uv_handle_t* handle) {
  release(static_cast<Connection*>(handle->data));
}

void closeConnection(Connection* c) {
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

size_t headEnd(const std::string& in) {
  size_t crlf = in.find("\r\n\r\n");
  if (crlf != std::string::npos) return crlf + 4;
  size_t lf = in.find("\n\n");
  return lf == std::string::npos ? std::string::npos : lf + 2;
}

}  // namespace

HttpAnswer HttpAnswer::error(int status, std::string reason, std::string body) {
  HttpAnswer a;
  a.status = status;
  a.reason = std::move(reason);
  a.body = std::move(body);
  return a;
}

std::string HttpAnswer::serialize() const {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                    "\r\nContent-Type: " + content_type +
                    "\r\nContent-Length: " + std::to_string(body.size());
  for (const auto& [name, value] : headers) out += "\r\n" + name + ": " + value;
  out += "\r\nConnection: close\r\n\r\n";
  if (!head) out += body;
  return out;
}

Result<std::unique_ptr<HttpServer>> HttpServer::open(uv_loop_t* loop, const std::string& address,
                                                     std::string_view what, Handler handler,
                                                     Authenticator* auth) {
  std::string named = std::string(what) + " " + address;
  Result<common::config::ListenAddress> parsed = common::config::parseListenAddress(address);
  if (!parsed.ok()) return common::invalidArgument(named + ": " + parsed.status().message());
  sockaddr_storage addr{};
  int rc =
      parsed->v6
          ? uv_ip6_addr(parsed->host.c_str(), parsed->port, reinterpret_cast<sockaddr_in6*>(&addr))
          : uv_ip4_addr(parsed->host.c_str(), parsed->port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) return common::invalidArgument(named + ": bad address");
  std::unique_ptr<HttpServer> server(new HttpServer(loop, std::move(handler), auth));
  server->listener_ = new uv_tcp_t;
  uv_tcp_init(loop, server->listener_);
  server->listener_->data = server.get();
  rc = uv_tcp_bind(server->listener_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) {
    rc =
        uv_listen(reinterpret_cast<uv_stream_t*>(server->listener_), 64, &HttpServer::onConnection);
  }
  if (rc != 0) {
    Status failed(common::StatusCode::kIoError, named + ": cannot listen: " + uv_strerror(rc));
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

HttpServer::~HttpServer() {
  close();
}

void HttpServer::close() {
  if (listener_ != nullptr) {
    listener_->data = nullptr;
    ipc::closeAndDelete(listener_);
  }
  for (Connection* c : connections_) {
    c->server = nullptr;
    closeConnection(c);
  }
  connections_.clear();
}

void HttpServer::drop(Connection* c) {
  if (c->server != nullptr) c->server->connections_.erase(c);
  c->server = nullptr;
  closeConnection(c);
}

void HttpServer::onConnection(uv_stream_t* listener, int status) {
  auto* self = static_cast<HttpServer*>(listener->data);
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
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(&c->tcp), onAlloc,
      [](uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
        std::unique_ptr<char[]> owned(buf->base);
        auto* conn = static_cast<Connection*>(stream->data);
        if (conn->server == nullptr) return;
        if (n == UV_EOF && (conn->state == Connection::State::kWriting ||
                            conn->state == Connection::State::kChecking)) {
          conn->peer_done = true;  // the answer goes out first
          return;
        }
        if (n < 0) return conn->server->drop(conn);              // EOF or error
        if (conn->state != Connection::State::kReading) return;  // dropped
        conn->in.append(buf->base, static_cast<size_t>(n));
        if (headEnd(conn->in) != std::string::npos || conn->in.size() >= kMaxRequestBytes) {
          conn->server->onHead(*conn);
        }
      });
}

void HttpServer::onHead(Connection& c) {
  size_t end = headEnd(c.in);
  if (end == std::string::npos || end > kMaxRequestBytes) {
    return respond(
        c, HttpAnswer::error(431, "Request Header Fields Too Large", "request too large\n"));
  }
  Result<HttpRequest> request = parseRequestHead(std::string_view(c.in).substr(0, end));
  if (!request.ok()) return respond(c, HttpAnswer::error(400, "Bad Request", "bad request\n"));
  c.request = std::move(request).value();
  if (auth_ == nullptr) return respond(c, handler_(c.request));
  Authenticator::Decision d = auth_->decide(c.request);
  switch (d.kind) {
    case Authenticator::Decision::Kind::kAllow:
      return respond(c, handler_(c.request));
    case Authenticator::Decision::Kind::kDeny:
      return respond(c, auth_->denied());
    case Authenticator::Decision::Kind::kCheck:
      return check(c, std::move(d.check));
  }
}

void HttpServer::check(Connection& c, std::function<bool()> fn) {
  c.state = Connection::State::kChecking;
  c.check = std::move(fn);
  c.work.data = &c;
  ++c.open_handles;  // the connection outlives the check, even if dropped meanwhile
  int rc = uv_queue_work(
      loop_, &c.work,
      [](uv_work_t* w) {
        auto* conn = static_cast<Connection*>(w->data);
        conn->allowed = conn->check();  // only the check's own data: safe off the loop
      },
      [](uv_work_t* w, int) {
        auto* conn = static_cast<Connection*>(w->data);
        conn->check = nullptr;
        HttpServer* self = conn->server;
        if (self != nullptr && !conn->closing) {
          self->auth_->verified(conn->request, conn->allowed);
          if (conn->peer_done) {
            self->drop(conn);
          } else {
            self->respond(*conn,
                          conn->allowed ? self->handler_(conn->request) : self->auth_->denied());
          }
        }
        release(conn);
      });
  if (rc != 0) {
    --c.open_handles;
    respond(c, HttpAnswer::error(503, "Service Unavailable", "try again\n"));
  }
}

void HttpServer::respond(Connection& c, const HttpAnswer& a) {
  c.state = Connection::State::kWriting;
  c.in.clear();
  c.out = a.serialize();
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

}  // namespace scalws::controller::http
