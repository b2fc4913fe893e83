#include "worker/http/pseudo_header_request.h"

#include <cstring>

#include "worker/http/authority.h"
#include "worker/http/method.h"

namespace scalws::worker {
namespace {

bool hasUpperCase(std::string_view s) {
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') return true;
  }
  return false;
}

void joinCookieCrumbs(std::vector<HeaderField>& fields, Arena& arena) {
  size_t cookies = 0;
  size_t cookie_bytes = 0;
  for (const HeaderField& h : fields) {
    if (h.name == "cookie") {
      ++cookies;
      cookie_bytes += h.value.size() + 2;
    }
  }
  if (cookies < 2) return;
  char* joined = arena.allocate(cookie_bytes);
  size_t len = 0;
  size_t first = fields.size();
  for (size_t i = 0; i < fields.size();) {
    if (fields[i].name != "cookie") {
      ++i;
      continue;
    }
    if (len > 0) {
      std::memcpy(joined + len, "; ", 2);
      len += 2;
    }
    std::memcpy(joined + len, fields[i].value.data(), fields[i].value.size());
    len += fields[i].value.size();
    if (first == fields.size()) {
      first = i++;
    } else {
      fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  fields[first].value = std::string_view(joined, len);
}

}  // namespace

uint16_t buildPseudoHeaderRequest(Request& r, HttpVersion version, const PseudoHeaders& pseudo,
                                  std::vector<HeaderField>& fields, Arena& arena, bool end_stream) {
  uint16_t error = 0;
  r.version = version;
  r.keep_alive = true;
  r.method_name = pseudo.method;
  r.method = methodFromName(pseudo.method);
  r.target = pseudo.path;
  size_t q = pseudo.path.find('?');
  r.raw_path = pseudo.path.substr(0, q);
  r.query = q == std::string_view::npos ? std::string_view() : pseudo.path.substr(q + 1);

  joinCookieCrumbs(fields, arena);
  if (!pseudo.authority.empty()) {
    bool has_host = false;
    for (const HeaderField& h : fields) {
      if (h.name != "host") continue;
      has_host = true;
      // RFC 9113 §8.3.1: "A server SHOULD treat a request as malformed if it contains a
      // Host header field that identifies an entity that differs from the entity in the
      // :authority pseudo-header field." (RFC 9114 §4.3.1 says the same.) Routes match
      // :authority while PHP would see the Host: refuse rather than serve one host's route
      // under another's name.
      if (!sameAuthority(h.value, pseudo.authority)) error = 400;
    }
    if (!has_host) fields.insert(fields.begin(), HeaderField{"host", pseudo.authority});
  }
  r.headers = std::span<const HeaderField>(fields.data(), fields.size());

  // :authority stands for Host; a request may carry Host instead.
  std::string_view authority = pseudo.authority.empty() ? r.header("host") : pseudo.authority;
  if (!authority.empty()) {
    bool valid = false;
    std::string_view host = hostWithoutPort(authority, valid);
    if (!valid) error = 400;
    if (hasUpperCase(host)) {
      char* lower = arena.allocate(host.size());
      for (size_t i = 0; i < host.size(); ++i) lower[i] = asciiLower(host[i]);
      host = std::string_view(lower, host.size());
    }
    r.host = host;
  }
  r.has_body = !end_stream;
  // nghttp2 and nghttp3 have checked that content-length is a number.
  std::string_view length = r.header("content-length");
  for (char c : length) r.content_length = r.content_length * 10 + static_cast<uint64_t>(c - '0');
  r.chunked = r.has_body && length.empty();  // the length is known once the stream ends
  r.expect_continue = equalsIgnoreCase(r.header("expect"), "100-continue");
  // RFC 8441 §4: an extended CONNECT asks for the protocol :protocol names over this stream.
  if (r.method == Method::kConnect && !pseudo.protocol.empty()) r.upgrade = pseudo.protocol;
  return error;
}

}  // namespace scalws::worker
