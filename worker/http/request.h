// The protocol-neutral request every handler sees (one Request shared by HTTP/1,
// HTTP/2 and HTTP/3).
//
// A Request is a set of views: method, target and headers point into the connection's read
// buffer (HTTP/1) or stream storage (HTTP/2, HTTP/3), so they are valid until the response finishes
// and no longer. What must outlive a read buffer goes into the request's arena. The
// connection owns the Request and reuses it for the next one on the same connection.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/regex/regex.h"
#include "worker/http/arena.h"
#include "worker/http/header_field.h"
#include "worker/http/method.h"

namespace scalws::common::config {
struct RouteConfig;
}

namespace scalws::worker {

class WorkerLoop;
class BodySink;
class ResponseRules;

enum class HttpVersion : uint8_t { kHttp10, kHttp11, kHttp2, kHttp3 };
// "HTTP/1.0", "HTTP/1.1", "HTTP/2.0", "HTTP/3.0" (as logs and CGI's SERVER_PROTOCOL write
// it, and as nginx does).
std::string_view httpVersionName(HttpVersion version);

class SharedHosts;

// The client of a connection. [real_ip] builds another for a request (applyRealIp in
// real_ip.cpp copies the fields field by field: add a new one there too).
struct PeerInfo {
  sockaddr_storage address{};
  socklen_t address_len = 0;
  uint16_t local_port = 0;
  bool tls = false;
  // Handed over by the front of an address this instance shares: the names it answers
  // there (a request for another's gets 421). Null on a listener of its own.
  std::shared_ptr<const SharedHosts> shared_hosts;
  // Received from a front (SCM_RIGHTS), which may still hold the socket open.
  bool handed_over = false;
};

class Request {
 public:
  Method method = Method::kGet;
  std::string_view method_name;
  std::string_view target;    // as received
  std::string_view raw_path;  // path of the target as sent, still percent-encoded
  std::string_view path;      // decoded and normalized (see path_normalizer.h)
  std::string_view query;     // after '?', without it; empty when none
  std::string_view host;      // lower-case, without port; empty when none was sent
  HttpVersion version = HttpVersion::kHttp11;
  std::span<const HeaderField> headers;

  bool keep_alive = true;
  bool has_body = false;  // Content-Length > 0, chunked, or an HTTP/2 or /3 body
  // The body's length is not declared: HTTP/1.1 chunked, or an HTTP/2 or HTTP/3 body
  // without content-length (it ends with the stream).
  bool chunked = false;
  uint64_t content_length = 0;  // valid when has_body && !chunked
  bool expect_continue = false;
  // The protocol the client asks to switch to ("websocket"): HTTP/1.1's Upgrade with
  // `Connection: upgrade`, or HTTP/2's extended CONNECT :protocol (RFC 8441). Empty when
  // none. A handler that accepts it answers 101 and the exchange becomes a tunnel
  // (response_writer.h).
  std::string_view upgrade;
  // Set by the proxy for the access log: the upstream server that answered (or the last
  // one tried), with its time from the request going out to the answer's end; empty when
  // no upstream was involved. The view lives as long as the request's config snapshot.
  std::string_view upstream_address;
  uint64_t upstream_us = 0;

  uint64_t id = 0;        // unique per worker process, for logs
  uint64_t start_ns = 0;  // monotonic, when the head was complete
  // The client: the connection's peer, or the address [real_ip] found in a header
  // (overridePeer). What `allow`, logs, PHP and the proxy see.
  const PeerInfo* peer = nullptr;
  WorkerLoop* loop = nullptr;
  const common::config::RouteConfig* route = nullptr;  // set by the router
  // The route's (or, before a route matched, the site's) response rules: error pages for
  // sendError; null when there are none (response_rules.h).
  const ResponseRules* response_rules = nullptr;
  // The groups of the route's regex, when it has one (views into a path of this request).
  const common::RegexCaptures* captures = nullptr;
  // The user a route's auth let in (views valid for the request); empty otherwise.
  std::string_view remote_user;
  Arena* arena = nullptr;

  // First header with this name (ASCII case-insensitive), or an empty view.
  std::string_view header(std::string_view name) const;
  // The path and query as the client sent them, in origin form ("/a/b?c"), whatever form
  // the target had and whatever a rewrite made of the path since.
  std::string_view originalUri() const;
  bool isHead() const { return method == Method::kHead; }

  // Handlers that consume the body register a sink before returning from handle();
  // without one the body is read and discarded (up to the route's max_body).
  void setBodySink(BodySink* sink) { body_sink_ = sink; }
  BodySink* bodySink() const { return body_sink_; }

  // The client is `real` (the request's arena or longer holds it) rather than the
  // connection's peer, for this request only.
  void overridePeer(const PeerInfo* real) {
    if (socket_peer_ == nullptr) socket_peer_ = peer;
    peer = real;
  }

  void resetForReuse();

 private:
  BodySink* body_sink_ = nullptr;
  const PeerInfo* socket_peer_ = nullptr;  // the connection's, while overridden
};

// Receives a request body as it arrives. Calls stop once onBodyEnd or the request's
// abort has been delivered.
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual void onBodyData(std::string_view data) noexcept = 0;
  virtual void onBodyEnd() noexcept = 0;
};

}  // namespace scalws::worker
