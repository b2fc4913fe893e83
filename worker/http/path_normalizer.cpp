#include "worker/http/path_normalizer.h"

#include <cstring>

namespace scalws::worker {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool needsWork(std::string_view p) {
  char prev = '\0';
  for (char c : p) {
    if (c == '%' || c == '\\') return true;
    if (prev == '/' && (c == '/' || c == '.')) return true;
    prev = c;
  }
  return false;
}

PathNormalization refuse(const char* why) {
  PathNormalization r;
  r.error = why;
  return r;
}

}  // namespace

PathNormalization normalizePath(std::string_view raw, Arena& arena) {
  if (raw.empty() || raw.front() != '/') return refuse("path does not start with /");
#ifdef SCALWS_TEST_DISABLE_PATH_CHECKS
  // Only in the test binary scalwsd-test-unchecked: paths reach the kernel as sent, to
  // prove openat2(RESOLVE_BENEATH) and Landlock refuse what these checks would have.
  (void)arena;
  (void)needsWork;
  return PathNormalization{true, raw, ""};
#endif
  if (!needsWork(raw)) return PathNormalization{true, raw, ""};

  // Decode into the arena first; every check below looks at decoded bytes.
  char* decoded = arena.allocate(raw.size());
  size_t n = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '%') {
      if (i + 2 >= raw.size()) return refuse("truncated escape");
      int hi = hexValue(raw[i + 1]);
      int lo = hexValue(raw[i + 2]);
      if (hi < 0 || lo < 0) return refuse("malformed escape");
      c = static_cast<char>(hi * 16 + lo);
      if (c == '\0') return refuse("encoded NUL");
      if (c == '/') return refuse("encoded slash");
      i += 2;
    }
    if (c == '\\') return refuse("backslash");
    decoded[n++] = c;
  }

  // Resolve segments in place: `out` never runs ahead of the reading position.
  char* out = arena.allocate(n + 1);
  size_t len = 0;
  size_t i = 0;
  while (i < n) {
    // decoded[i] == '/' here; skip repeated slashes.
    while (i < n && decoded[i] == '/') ++i;
    size_t seg_start = i;
    while (i < n && decoded[i] != '/') ++i;
    std::string_view seg(decoded + seg_start, i - seg_start);
    bool trailing = i >= n;  // no slash after this segment
    if (seg.empty()) {
      if (len == 0 || out[len - 1] != '/') out[len++] = '/';
      continue;
    }
    if (seg == ".") {
      if (len == 0) out[len++] = '/';
      if (trailing && out[len - 1] != '/') out[len++] = '/';
      continue;
    }
    if (seg == "..") {
      // Drop the last segment of `out` ("/a/b" or "/a/b/" → "/a/").
      if (len <= 1) return refuse("path climbs above the root");
      if (out[len - 1] == '/') --len;
      while (len > 0 && out[len - 1] != '/') --len;
      if (len == 0) out[len++] = '/';
      continue;
    }
    if (len == 0 || out[len - 1] != '/') out[len++] = '/';
    std::memcpy(out + len, seg.data(), seg.size());
    len += seg.size();
    if (!trailing) out[len++] = '/';
  }
  if (len == 0) out[len++] = '/';
  return PathNormalization{true, std::string_view(out, len), ""};
}

}  // namespace scalws::worker
