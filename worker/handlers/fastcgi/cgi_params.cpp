#include "worker/handlers/fastcgi/cgi_params.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

#include "worker/handlers/fastcgi/record_writer.h"
#include "worker/http/address_text.h"

namespace scalws::worker::fastcgi {
namespace {

bool passableHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) return false;
  }
  return !equalsIgnoreCase(name, "proxy") && !equalsIgnoreCase(name, "content-type") &&
         !equalsIgnoreCase(name, "content-length");
}

// A pair whose value is the concatenation of `parts` (no temporary string).
void appendJoined(std::string& out, std::string_view name,
                  std::initializer_list<std::string_view> parts) {
  size_t total = 0;
  for (std::string_view p : parts) total += p.size();
  appendPairLengths(out, name.size(), total);
  out.append(name);
  for (std::string_view p : parts) out.append(p);
}

void appendRemote(std::string& out, const PeerInfo& peer) {
  // An IPv4 client on a dual-stack listener is written dotted: PHP code expects that form.
  char addr[kAddressTextSize];
  std::string_view addr_text = addressText(peer.address, addr);
  uint16_t port = 0;
  if (peer.address.ss_family == AF_INET) {
    port = ntohs(reinterpret_cast<const sockaddr_in*>(&peer.address)->sin_port);
  } else if (peer.address.ss_family == AF_INET6) {
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(&peer.address)->sin6_port);
  }
  char port_text[8];
  auto r = std::to_chars(port_text, port_text + sizeof(port_text), port);
  appendNameValue(out, "REMOTE_ADDR", addr_text);
  appendNameValue(out, "REMOTE_PORT", std::string_view(port_text, r.ptr - port_text));
}

void appendHeaders(std::string& out, const Request& request) {
  const auto& headers = request.headers;
  for (size_t i = 0; i < headers.size(); ++i) {
    std::string_view name = headers[i].name;
    if (!passableHeaderName(name)) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = equalsIgnoreCase(headers[j].name, name);
    if (seen) continue;  // joined into the first occurrence
    size_t value_len = headers[i].value.size();
    size_t count = 1;
    std::string_view sep = equalsIgnoreCase(name, "cookie") ? "; " : ", ";
    for (size_t j = i + 1; j < headers.size(); ++j) {
      if (!equalsIgnoreCase(headers[j].name, name)) continue;
      value_len += sep.size() + headers[j].value.size();
      ++count;
    }
    // Name "HTTP_" + upper-cased name with '-' as '_'. Encoded by hand: pairs are
    // length-prefixed, so the name is written straight into `out`.
    size_t name_len = 5 + name.size();
    appendPairLengths(out, name_len, value_len);
    out.append("HTTP_");
    for (char c : name) {
      out.push_back(c == '-' ? '_' : (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c);
    }
    out.append(headers[i].value);
    if (count == 1) continue;
    for (size_t j = i + 1; j < headers.size(); ++j) {
      if (!equalsIgnoreCase(headers[j].name, name)) continue;
      out.append(sep);
      out.append(headers[j].value);
    }
  }
}

}  // namespace

void appendCgiParams(std::string& out, const Request& r, const ScriptMatch& script,
                     const CgiSite& site) {
  // "/" as root would make "//x.php"; every other root is stored without a trailing "/".
  std::string_view root = site.document_root == "/" ? std::string_view() : site.document_root;
  appendNameValue(out, "GATEWAY_INTERFACE", "CGI/1.1");
  appendNameValue(out, "SERVER_SOFTWARE", site.server_software);
  appendNameValue(out, "SERVER_PROTOCOL", httpVersionName(r.version));
  appendNameValue(out, "REQUEST_METHOD", r.method_name);
  // REQUEST_URI is the target as the client sent it (a front controller routes on it).
  if (!r.target.empty() && r.target.front() == '/') {
    appendNameValue(out, "REQUEST_URI", r.target);
  } else if (r.query.empty()) {
    appendNameValue(out, "REQUEST_URI", r.raw_path);
  } else {
    appendJoined(out, "REQUEST_URI", {r.raw_path, "?", r.query});
  }
  appendNameValue(out, "DOCUMENT_URI", script.script_name);
  appendNameValue(out, "QUERY_STRING", r.query);
  appendNameValue(out, "DOCUMENT_ROOT", site.document_root);
  appendNameValue(out, "SCRIPT_NAME", script.script_name);
  appendJoined(out, "SCRIPT_FILENAME", {root, script.script_name});
  if (!script.path_info.empty()) {
    appendNameValue(out, "PATH_INFO", script.path_info);
    appendJoined(out, "PATH_TRANSLATED", {root, script.path_info});
  }
  appendNameValue(out, "SERVER_NAME", r.host);
  if (r.peer != nullptr) {
    char port_text[8];
    auto res = std::to_chars(port_text, port_text + sizeof(port_text), r.peer->local_port);
    appendNameValue(out, "SERVER_PORT", std::string_view(port_text, res.ptr - port_text));
    appendRemote(out, *r.peer);
    if (r.peer->tls) appendNameValue(out, "HTTPS", "on");
  }
  appendNameValue(out, "REQUEST_SCHEME", r.peer != nullptr && r.peer->tls ? "https" : "http");
  if (!r.remote_user.empty()) {
    // RFC 3875 §4.1.1, §4.1.11: what the route's auth established.
    appendNameValue(out, "AUTH_TYPE", "Basic");
    appendNameValue(out, "REMOTE_USER", r.remote_user);
  }
  appendNameValue(out, "CONTENT_TYPE", r.header("content-type"));
  if (r.has_body && !r.chunked) {
    char len_text[24];
    auto res = std::to_chars(len_text, len_text + sizeof(len_text), r.content_length);
    appendNameValue(out, "CONTENT_LENGTH", std::string_view(len_text, res.ptr - len_text));
  } else {
    appendNameValue(out, "CONTENT_LENGTH", "");
  }
  // php-cgi with cgi.force_redirect refuses to run without it; harmless for PHP-FPM.
  appendNameValue(out, "REDIRECT_STATUS", "200");
  appendHeaders(out, r);
}

}  // namespace scalws::worker::fastcgi
