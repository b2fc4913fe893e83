#include "worker/http/authority.h"

#include <array>

#include "worker/http/header_field.h"

namespace scalws::worker {
namespace {

// RFC 3986 reg-name and IPv4 bytes: unreserved, pct-encoded's '%', sub-delims.
constexpr std::array<bool, 256> makeHostCharTable() {
  std::array<bool, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (char c : std::string_view("-._~%!$&'()*+,;=")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kHostChar = makeHostCharTable();

bool isHostChar(char c) {
  return kHostChar[static_cast<unsigned char>(c)];
}

}  // namespace

std::string_view hostWithoutPort(std::string_view h, bool& valid) {
  valid = false;
  if (h.empty()) return {};
  std::string_view host;
  std::string_view rest;
  if (h.front() == '[') {
    size_t close = h.find(']');
    if (close == std::string_view::npos) return {};
    host = h.substr(0, close + 1);
    for (char c : host.substr(1, host.size() - 2)) {
      bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
                c == ':' || c == '.';
      if (!ok) return {};
    }
    rest = h.substr(close + 1);
  } else {
    size_t colon = h.find(':');
    host = h.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : h.substr(colon);
    if (host.empty()) return {};
    for (char c : host) {
      if (!isHostChar(c)) return {};
    }
  }
  if (!rest.empty()) {
    if (rest.front() != ':') return {};
    rest.remove_prefix(1);
    if (rest.size() > 5) return {};
    for (char c : rest) {
      if (c < '0' || c > '9') return {};
    }
  }
  valid = true;
  return host;
}

bool sameAuthority(std::string_view a, std::string_view b) {
  bool valid_a = false;
  bool valid_b = false;
  std::string_view host_a = hostWithoutPort(a, valid_a);  // a prefix of `a`
  std::string_view host_b = hostWithoutPort(b, valid_b);
  if (!valid_a || !valid_b || !equalsIgnoreCase(host_a, host_b)) return false;
  std::string_view port_a = a.substr(host_a.size());  // ":8443" or empty
  std::string_view port_b = b.substr(host_b.size());
  return port_a.empty() || port_b.empty() || port_a == port_b;
}

}  // namespace scalws::worker
