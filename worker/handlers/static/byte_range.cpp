#include "worker/handlers/static/byte_range.h"

#include "worker/http/header_field.h"

namespace scalws::worker {
namespace {

// Decimal digits; a value past 2^64-1 saturates (it can only be past the end of a file).
bool parseNumber(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
  }
  out = v;
  return true;
}

RangeRequest whole() {
  return RangeRequest{};
}

}  // namespace

RangeRequest parseRange(std::string_view header, uint64_t size) {
  header = trimOws(header);
  constexpr std::string_view kUnit = "bytes=";
  if (size == 0 || header.size() < kUnit.size() ||
      !equalsIgnoreCase(header.substr(0, kUnit.size()), kUnit)) {
    return whole();
  }
  std::string_view set = header.substr(kUnit.size());

  RangeRequest out;
  size_t specs = 0;
  bool none_satisfiable = true;
  uint64_t total = 0;
  bool more_than_file = false;
  while (!set.empty()) {
    size_t comma = set.find(',');
    std::string_view spec = trimOws(set.substr(0, comma));
    set = comma == std::string_view::npos ? std::string_view() : set.substr(comma + 1);
    if (spec.empty()) continue;  // RFC 9110 §5.6.1: empty list elements are allowed
    if (++specs > RangeRequest::kMaxRanges) return whole();

    size_t dash = spec.find('-');
    if (dash == std::string_view::npos) return whole();
    std::string_view first_text = spec.substr(0, dash);
    std::string_view last_text = spec.substr(dash + 1);
    ByteRange r;
    if (first_text.empty()) {
      uint64_t suffix = 0;
      if (!parseNumber(last_text, suffix)) return whole();
      if (suffix == 0) continue;  // unsatisfiable
      r.length = suffix < size ? suffix : size;
      r.first = size - r.length;
    } else {
      uint64_t first = 0;
      if (!parseNumber(first_text, first)) return whole();
      uint64_t last = size - 1;
      if (!last_text.empty()) {
        if (!parseNumber(last_text, last)) return whole();
        if (last < first) return whole();  // invalid range-spec: the header is ignored
      }
      if (first >= size) continue;  // unsatisfiable
      if (last >= size) last = size - 1;
      r.first = first;
      r.length = last - first + 1;
    }
    none_satisfiable = false;
    if (r.length > size - total) {
      more_than_file = true;
    } else {
      total += r.length;
    }
    out.ranges[out.count++] = r;
  }
  if (specs == 0) return whole();
  if (none_satisfiable) {
    out.kind = RangeRequest::Kind::kUnsatisfiable;
    out.count = 0;
    return out;
  }
  if (out.count > 1 && more_than_file) return whole();
  out.kind = RangeRequest::Kind::kRanges;
  return out;
}

}  // namespace scalws::worker
