#include "worker/handlers/proxy/request_head.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <uv.h>

#include <cstring>

#include "worker/http/address_text.h"
#include "worker/http/field_name.h"
#include "worker/http/method.h"

namespace scalws::worker::proxy {
namespace {

using std::string_view_literals::operator""sv;

// RFC 9110 §7.6.1 and the fields this head recomputes.
constexpr FieldNameSet kDroppedRequestFields = {FieldName::kConnection,
                                                FieldName::kKeepAlive,
                                                FieldName::kTe,
                                                FieldName::kTrailer,
                                                FieldName::kTransferEncoding,
                                                FieldName::kUpgrade,
                                                FieldName::kContentLength,
                                                FieldName::kHost,
                                                FieldName::kExpect,
                                                FieldName::kXForwardedFor,
                                                FieldName::kXForwardedProto,
                                                FieldName::kXForwardedHost,
                                                FieldName::kForwarded};

bool startsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && equalsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

bool dropped(const HeaderField& h, const Request& request, const ProxyRoute& route) {
  FieldName known = classifyFieldName(h.name);
  if (kDroppedRequestFields.contains(known)) return true;
  if (startsWithIgnoreCase(h.name, "proxy-")) return true;  // Proxy-Connection, -Authorization
  if (route.via && known == FieldName::kVia) return true;   // appended to below
  for (const auto& set : route.set_request_headers) {
    if (equalsIgnoreCase(h.name, set.name)) return true;
  }
  // RFC 9110 §7.6.1: and every field the Connection header names.
  for (const HeaderField& c : request.headers) {
    if (equalsIgnoreCase(c.name, "connection") && headerListContains(c.value, h.name)) return true;
  }
  return false;
}

void appendField(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out.append(": "sv);
  out.append(value);
  out.append("\r\n"sv);
}

// Every value of the field `name`, joined with ", " (RFC 9110 §5.3), then `own`.
// Starts the field `name` with every value the client sent for it, joined with ", " (RFC
// 9110 §5.3), ready for ours to be appended; the caller ends the line.
void beginListField(std::string& out, const Request& request, std::string_view name) {
  out.append(name);
  out.append(": "sv);
  for (const HeaderField& h : request.headers) {
    if (equalsIgnoreCase(h.name, name) && !h.value.empty()) {
      out.append(h.value);
      out.append(", "sv);
    }
  }
}

void appendListField(std::string& out, const Request& request, std::string_view name,
                     std::string_view own) {
  beginListField(out, request, name);
  out.append(own);
  out.append("\r\n"sv);
}

bool isPathByte(unsigned char c) {
  // RFC 3986 pchar and "/": unreserved, sub-delims, ':' and '@'.
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::strchr("-._~!$&'()*+,;=:@/", c) != nullptr && c != 0;
}

void appendEncodedPath(std::string& out, std::string_view path) {
  static const char kHex[] = "0123456789ABCDEF";
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (isPathByte(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
}

// `prefix` at the start of `path`, ending there or at a '/'.
bool hasPathPrefix(std::string_view path, std::string_view prefix) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

void appendTarget(std::string& out, const Request& request, const ProxyRoute& route) {
  std::string_view raw = request.raw_path.empty() ? std::string_view("/") : request.raw_path;
  const std::string& prefix = route.strip_prefix;
  if (!prefix.empty() && hasPathPrefix(raw, prefix)) {
    // The prefix as written: the rest keeps the client's encoding.
    std::string_view rest = raw.substr(prefix.size());
    out.append(rest.empty() ? std::string_view("/") : rest);
  } else if (!prefix.empty() && hasPathPrefix(request.path, prefix)) {
    // Matched only once decoded ("/%61pi/x" for "/api"): send the decoded rest re-encoded.
    std::string_view rest = request.path.substr(prefix.size());
    if (rest.empty()) {
      out.push_back('/');
    } else {
      appendEncodedPath(out, rest);
    }
  } else {
    out.append(raw);
  }
  if (!request.query.empty()) {
    out.push_back('?');
    out.append(request.query);
  }
}

// RFC 7239 §6: node = IPv4 | "[" IPv6 "]" (quoted), "unknown" when there is none.
void appendForwardedFor(std::string& out, std::string_view client) {
  if (client.empty()) {
    out.append("for=unknown"sv);
  } else if (client.find(':') != std::string_view::npos) {
    out.append("for=\"["sv);
    out.append(client);
    out.append("]\""sv);
  } else {
    out.append("for="sv);
    out.append(client);
  }
}

void appendQuotedIfNeeded(std::string& out, std::string_view value) {
  if (isToken(value)) {
    out.append(value);
    return;
  }
  out.push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

}  // namespace

RequestFraming requestFramingOf(const Request& request, uint64_t& content_length) {
  content_length = 0;
  if (!request.has_body) {
    // RFC 9110 §8.6: a user agent should send Content-Length: 0 when a method that
    // expects content carries none; an upstream may otherwise answer 411.
    bool expects = request.method == Method::kPost || request.method == Method::kPut ||
                   request.method == Method::kPatch;
    return expects ? RequestFraming::kContentLength : RequestFraming::kNone;
  }
  if (request.version != HttpVersion::kHttp2 && request.version != HttpVersion::kHttp3) {
    if (request.chunked) return RequestFraming::kChunked;
    content_length = request.content_length;
    return RequestFraming::kContentLength;
  }
  // HTTP/2 and HTTP/3 frame the body themselves; content-length, when sent, was checked
  // against it. Without one the length is unknown until the stream ends: chunked.
  if (!request.header("content-length").empty()) {
    content_length = request.content_length;
    return RequestFraming::kContentLength;
  }
  return RequestFraming::kChunked;
}

std::string_view makeWebSocketKey(char (&out)[25]) {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof(raw)) != 1) {
    // Not a secret (it only proves the server speaks WebSocket): a clock will do.
    uint64_t t = uv_hrtime();
    for (size_t i = 0; i < sizeof(raw); ++i) raw[i] = static_cast<unsigned char>(t >> (i % 8 * 8));
  }
  EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out), raw, sizeof(raw));  // 24 chars, NUL
  return std::string_view(out, 24);
}

void appendRequestHead(std::string& out, const Request& request, const ProxyRoute& route,
                       const ServerSpec& server, const RequestHeadOptions& options) {
  // RFC 8441 §5: an extended CONNECT becomes the HTTP/1.1 GET of a WebSocket handshake.
  out.append(options.upgrade && request.method == Method::kConnect ? std::string_view("GET")
                                                                   : request.method_name);
  out.push_back(' ');
  appendTarget(out, request, route);
  out.append(" HTTP/1.1\r\n"sv);

  std::string_view client_host = request.header("host");
  std::string_view host;
  switch (route.host_mode) {
    case common::config::ProxyAction::HostMode::kPass:
      host = client_host.empty() ? std::string_view(server.host_header) : client_host;
      break;
    case common::config::ProxyAction::HostMode::kUpstream:
      host = server.host_header;
      break;
    case common::config::ProxyAction::HostMode::kFixed:
      host = route.host;
      break;
  }
  appendField(out, "Host", host);

  for (const HeaderField& h : request.headers) {
    if (dropped(h, request, route)) continue;
    if (options.cache_fill &&
        (equalsIgnoreCase(h.name, "if-none-match") ||
         equalsIgnoreCase(h.name, "if-modified-since") || equalsIgnoreCase(h.name, "if-range") ||
         equalsIgnoreCase(h.name, "range"))) {
      continue;
    }
    appendField(out, h.name, h.value);
  }
  out.append(options.conditional);

  char buf[kAddressTextSize];
  std::string_view client = addressText(request.peer->address, buf);
  bool tls = request.peer->tls;
  appendListField(out, request, "X-Forwarded-For", client.empty() ? "unknown" : client);
  appendField(out, "X-Forwarded-Proto", tls ? "https" : "http");
  if (!client_host.empty()) appendField(out, "X-Forwarded-Host", client_host);
  // Written in place: a request in steady state allocates nothing here.
  beginListField(out, request, "Forwarded");
  appendForwardedFor(out, client);
  if (!client_host.empty()) {
    out.append(";host="sv);
    appendQuotedIfNeeded(out, client_host);
  }
  out.append(tls ? ";proto=https\r\n"sv : ";proto=http\r\n"sv);
  if (route.via) {
    appendListField(out, request, "Via",
                    request.version == HttpVersion::kHttp3    ? "3 scalws"
                    : request.version == HttpVersion::kHttp2  ? "2 scalws"
                    : request.version == HttpVersion::kHttp10 ? "1.0 scalws"
                                                              : "1.1 scalws");
  }
  for (const auto& set : route.set_request_headers) appendField(out, set.name, set.value);

  switch (options.framing) {
    case RequestFraming::kNone:
      break;
    case RequestFraming::kContentLength:
      out.append("Content-Length: "sv);
      out.append(std::to_string(options.content_length));
      out.append("\r\n"sv);
      break;
    case RequestFraming::kChunked:
      out.append("Transfer-Encoding: chunked\r\n"sv);
      break;
  }
  if (options.upgrade) {
    out.append("Upgrade: websocket\r\nConnection: upgrade\r\n"sv);
    if (!options.websocket_key.empty())
      appendField(out, "Sec-WebSocket-Key", options.websocket_key);
  } else if (options.close) {
    out.append("Connection: close\r\n"sv);
  }
  out.append("\r\n"sv);
}

void appendChunk(std::string& out, std::string_view data) {
  if (data.empty()) return;  // a zero size would end the body
  char size[20];
  int n = snprintf(size, sizeof(size), "%zx\r\n", data.size());
  out.append(size, static_cast<size_t>(n));
  out.append(data);
  out.append("\r\n"sv);
}

}  // namespace scalws::worker::proxy
