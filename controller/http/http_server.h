// HttpServer: the controller's small HTTP/1.1 responder, on the controller's loop. It
// serves the Prometheus endpoint (metrics_http_server.h) and the dashboard
// (dashboard/dashboard.h); each gives it a Handler that maps a request to an answer.
//
// One request per connection: the head is read (at most kMaxRequestBytes, within
// kRequestTimeoutMs; a request body is never read), the answer is written with
// `Connection: close`, the write side is shut down and what the client still sends is read
// and dropped until it closes (or the deadline), so closing never resets the answer away.
// At most kMaxConnections at once; beyond that a connection is closed at once. A head that
// does not parse gets 400, a too long one 431, and neither reaches the handler.
//
// With an Authenticator, every request passes it first. decide() runs on the loop and
// either answers (allow, deny) or hands back a check to run on libuv's thread pool (a
// bcrypt or SHA-crypt hash costs milliseconds to tens of them: never on the loop); its
// result comes back to verified() on the loop, then the request is allowed or denied. The
// check must own what it reads (the server may be gone when it finishes).
//
// The handler runs on the loop thread. Destroying the server (or close()) stops listening
// and drops open connections; libuv frees their memory once the loop runs (a connection
// waiting for a check is freed once the check is done).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "controller/http/http_request.h"

namespace scalws::controller::http {

struct HttpAnswer {
  int status = 200;
  std::string reason = "OK";
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // beyond the framing ones
  std::string body;
  bool head = false;  // HEAD: headers only (Content-Length still the body's)

  static HttpAnswer error(int status, std::string reason, std::string body);
  // "HTTP/1.1 ...\r\n" + fields + Content-Length + Connection: close + "\r\n" + body.
  std::string serialize() const;
};

class Authenticator {
 public:
  struct Decision {
    enum class Kind { kAllow, kDeny, kCheck };
    Kind kind = Kind::kDeny;
    std::function<bool()> check;  // kCheck: run on the thread pool; true = allowed
  };
  virtual ~Authenticator() = default;
  virtual Decision decide(const HttpRequest& request) = 0;
  // On the loop, after a check (only while the server is open).
  virtual void verified(const HttpRequest& request, bool allowed) = 0;
  // What a denied request gets (401 and its challenge).
  virtual HttpAnswer denied() const = 0;
};

class HttpServer {
 public:
  using Handler = std::function<HttpAnswer(const HttpRequest&)>;

  static constexpr size_t kMaxRequestBytes = 8192;
  static constexpr uint64_t kRequestTimeoutMs = 5000;
  static constexpr size_t kMaxConnections = 16;

  // `address`: "127.0.0.1:9145", "[::1]:9145" (a literal address, as in [[listen]]);
  // `what` names the server in errors ("--metrics-listen"). `auth` (may be null) must
  // outlive the server.
  static common::Result<std::unique_ptr<HttpServer>> open(uv_loop_t* loop,
                                                          const std::string& address,
                                                          std::string_view what, Handler handler,
                                                          Authenticator* auth = nullptr);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void close();
  uint16_t port() const { return port_; }
  size_t openConnections() const { return connections_.size(); }

  struct Connection;  // one client, internal to the .cpp

 private:
  HttpServer(uv_loop_t* loop, Handler handler, Authenticator* auth)
      : loop_(loop), handler_(std::move(handler)), auth_(auth) {}
  static void onConnection(uv_stream_t* server, int status);
  void onHead(Connection& c);
  void check(Connection& c, std::function<bool()> check);
  void respond(Connection& c, const HttpAnswer& a);
  void drop(Connection* c);

  uv_loop_t* loop_;
  Handler handler_;
  Authenticator* auth_;
  uv_tcp_t* listener_ = nullptr;  // freed by its close callback
  uint16_t port_ = 0;
  std::set<Connection*> connections_;
};

}  // namespace scalws::controller::http
