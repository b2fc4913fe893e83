// The head of the request the proxy sends upstream, rebuilt from the client's request
// rather than forwarded (RFC 9110 §7.6: a proxy removes the hop-by-hop fields):
//
// - request line: the method as received, the path as received (percent-encoding kept) or,
//   with strip_prefix, the normalised path without the prefix, re-encoded; the query; always
//   HTTP/1.1;
// - Host per route.proxy.host; the client's fields except Connection and the fields it
//   names, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade, Content-Length,
//   Expect (100-continue is answered to the client before the body is read) and those
//   set_request_headers replaces;
// - X-Forwarded-For (the client's address appended), X-Forwarded-Proto, X-Forwarded-Host,
//   Forwarded (RFC 7239, appended), Via when asked;
// - exactly one framing: Content-Length when the length is known, chunked otherwise, none
//   without a body (Content-Length: 0 for methods that expect one).
#pragma once

#include <cstdint>
#include <string>

#include "worker/handlers/proxy/proxy_route.h"
#include "worker/http/request.h"

namespace scalws::worker::proxy {

enum class RequestFraming { kNone, kContentLength, kChunked };

struct RequestHeadOptions {
  RequestFraming framing = RequestFraming::kNone;
  uint64_t content_length = 0;  // kContentLength
  // A WebSocket handshake: `Upgrade: websocket` and `Connection: upgrade` are sent, the
  // method is GET even for HTTP/2's extended CONNECT (RFC 8441 §5), and `websocket_key`
  // goes as Sec-WebSocket-Key when the client sent none (an HTTP/2 client never does).
  bool upgrade = false;
  std::string_view websocket_key;
  bool close = false;  // ask the upstream to close after this response
  // A cache fill: the client's validators and Range are not passed on (the cache wants the
  // whole current response and answers those itself, RFC 9111 §4.3.2), and `conditional`
  // (rendered "If-None-Match: ...\r\n" lines of a stored entry being revalidated) goes
  // instead.
  bool cache_fill = false;
  std::string_view conditional;
};

// A fresh Sec-WebSocket-Key (RFC 6455 §4.1: 16 random bytes, base64) written into `out`.
std::string_view makeWebSocketKey(char (&out)[25]);

// How the body of `request` goes upstream.
RequestFraming requestFramingOf(const Request& request, uint64_t& content_length);

// Appends the upstream request head to `out`.
void appendRequestHead(std::string& out, const Request& request, const ProxyRoute& route,
                       const ServerSpec& server, const RequestHeadOptions& options);

// One chunk of a chunked body (RFC 9112 §7.1): size line, data, CRLF.
void appendChunk(std::string& out, std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace scalws::worker::proxy
