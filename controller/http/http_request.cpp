#include "controller/http/http_request.h"

#include <algorithm>

namespace scalws::controller::http {

namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool safePath(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  for (char c : path) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '\\') return false;
  }
  // "/.." anywhere as a whole segment.
  for (size_t at = path.find("/.."); at != std::string_view::npos; at = path.find("/..", at + 1)) {
    size_t end = at + 3;
    if (end == path.size() || path[end] == '/') return false;
  }
  return true;
}

}  // namespace

common::Result<HttpRequest> parseRequestHead(std::string_view head) {
  size_t eol = head.find('\n');
  std::string_view line = head.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0 ||
      line.size() != sp2 + 9) {
    return common::invalidArgument("bad request line");
  }
  HttpRequest r;
  r.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  if (!safePath(path)) return common::invalidArgument("bad request target");
  r.path = std::string(path);
  if (q != std::string_view::npos) r.query = std::string(target.substr(q + 1));
  std::string_view rest = eol == std::string_view::npos ? "" : head.substr(eol + 1);
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view field = rest.substr(0, end);
    rest = end == std::string_view::npos ? "" : rest.substr(end + 1);
    size_t colon = field.find(':');
    if (colon == std::string_view::npos) continue;  // the blank line, or junk we ignore
    if (equalsIgnoreCase(field.substr(0, colon), "authorization")) {
      // RFC 9110 §5.3: a field that may not be a list must not be sent twice.
      if (!r.authorization.empty()) return common::invalidArgument("two Authorization fields");
      r.authorization = std::string(trim(field.substr(colon + 1)));
    }
  }
  return r;
}

std::string_view queryValue(std::string_view query, std::string_view key, bool* found) {
  *found = false;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      *found = true;
      return eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    }
  }
  return "";
}

}  // namespace scalws::controller::http
