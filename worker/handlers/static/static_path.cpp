#include "worker/handlers/static/static_path.h"

namespace scalws::worker {
namespace {

// Longer paths cannot name a file (PATH_MAX is 4096 with the NUL).
constexpr size_t kMaxPath = 4000;
constexpr std::string_view kWellKnown = ".well-known";

// RFC 3986 pchar without pct-encoded: unreserved / sub-delims / ":" / "@".
bool isPathSafe(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':
    case ':':
    case '@':
    case '/':
      return true;
    default:
      return false;
  }
}

}  // namespace

StaticPath checkStaticPath(std::string_view path, bool allow_dotfiles) {
  StaticPath out;
  if (path.empty() || path.front() != '/' || path.size() > kMaxPath) return out;
  std::string_view rest = path.substr(1);
  bool first = true;
  bool dotfile = false;
  size_t start = 0;
  while (start < rest.size()) {
    size_t end = rest.find('/', start);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view segment = rest.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") return out;
    for (char c : segment) {
      if (c == '\0' || c == '\\') return out;
    }
    if (segment.front() == '.' && !(first && segment == kWellKnown)) dotfile = true;
    first = false;
    start = end + 1;
  }
  out.verdict = dotfile && !allow_dotfiles ? StaticPathVerdict::kDotfile : StaticPathVerdict::kOk;
  out.relative = rest;
  out.directory = path.back() == '/';
  return out;
}

std::string_view directoryRedirectLocation(std::string_view path, std::string_view query,
                                           Arena& arena) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  char* out = arena.allocate(path.size() * 3 + 1 + 1 + query.size() * 3);
  size_t n = 0;
  auto encode = [&](unsigned char c) {
    out[n++] = '%';
    out[n++] = kHex[c >> 4];
    out[n++] = kHex[c & 15];
  };
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (isPathSafe(c)) {
      out[n++] = ch;
    } else {
      encode(c);
    }
  }
  out[n++] = '/';
  if (!query.empty()) {
    out[n++] = '?';
    // The query is still encoded as the client sent it; only what a header value or a
    // URI cannot hold is escaped.
    for (char ch : query) {
      auto c = static_cast<unsigned char>(ch);
      if (c > 0x20 && c < 0x7f && c != '#') {
        out[n++] = ch;
      } else {
        encode(c);
      }
    }
  }
  return std::string_view(out, n);
}

}  // namespace scalws::worker
