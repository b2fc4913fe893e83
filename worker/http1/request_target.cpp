#include "worker/http1/request_target.h"

#include <array>

#include "worker/http/header_field.h"

namespace scalws::worker::http1 {
namespace {

void splitPathQuery(std::string_view pq, RequestTarget& out) {
  size_t q = pq.find('?');
  if (q == std::string_view::npos) {
    out.path = pq;
    out.query = {};
  } else {
    out.path = pq.substr(0, q);
    out.query = pq.substr(q + 1);
  }
}

// RFC 9112 §3.2: the request-target is a URI reference without a fragment, and a URI is
// ASCII: raw bytes above 0x7F (RFC 3986 §2: percent-encode them) and the "#" that starts a
// fragment (never sent, RFC 9110 §7.1) make the line invalid. Controls and SP never get
// here (the head scanner and llhttp refuse them). The other characters RFC 3986 leaves out
// ("<", "|", "{" ...) are let through, as clients do send them.
bool hasOnlyTargetBytes(std::string_view target) {
  for (char ch : target) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || c == '#') return false;
  }
  return true;
}

}  // namespace

bool parseRequestTarget(std::string_view target, Method method, RequestTarget& out) {
  out = RequestTarget();
  if (target.empty() || !hasOnlyTargetBytes(target)) return false;
  if (method == Method::kConnect) {
    out.form = RequestTarget::Form::kAuthority;
    bool valid = false;
    out.authority_host = hostWithoutPort(target, valid);
    return valid;
  }
  if (target == "*") {
    out.form = RequestTarget::Form::kAsterisk;
    return method == Method::kOptions;
  }
  if (target.front() == '/') {
    splitPathQuery(target, out);
    return true;
  }
  // absolute-form: scheme "://" authority path-abempty [ "?" query ]
  size_t scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return false;
  std::string_view scheme = target.substr(0, scheme_end);
  if (!equalsIgnoreCase(scheme, "http") && !equalsIgnoreCase(scheme, "https")) return false;
  std::string_view rest = target.substr(scheme_end + 3);
  size_t path_start = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_start);
  if (authority.find('@') != std::string_view::npos) return false;  // no userinfo
  bool valid = false;
  out.authority_host = hostWithoutPort(authority, valid);
  if (!valid) return false;
  out.form = RequestTarget::Form::kAbsolute;
  if (path_start == std::string_view::npos) {
    out.path = "/";
    return true;
  }
  std::string_view pq = rest.substr(path_start);
  if (pq.front() == '?') {
    out.path = "/";
    out.query = pq.substr(1);
    return true;
  }
  splitPathQuery(pq, out);
  return true;
}

}  // namespace scalws::worker::http1
