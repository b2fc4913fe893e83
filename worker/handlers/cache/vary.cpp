#include "worker/handlers/cache/vary.h"

#include <algorithm>
#include <array>

namespace scalws::worker::cache {
namespace {

// q > 0 (RFC 9110 §12.4.2); a malformed q counts as 0.
bool acceptable(std::string_view params) {
  while (!params.empty()) {
    size_t next = params.find(';');
    std::string_view param = trimOws(params.substr(0, next));
    params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
    if (param.size() < 2 || (param[0] != 'q' && param[0] != 'Q') || param[1] != '=') continue;
    std::string_view q = param.substr(2);
    if (q.empty()) return false;
    for (char c : q) {
      if (c >= '1' && c <= '9') return true;
      if (c != '0' && c != '.') return false;
    }
    return false;  // "0", "0.0", "0.000"
  }
  return true;
}

}  // namespace

std::string varyFieldNames(std::span<const HeaderField> headers, bool& star) {
  star = false;
  std::string names;
  std::vector<std::string> seen;
  for (const HeaderField& h : headers) {
    if (!equalsIgnoreCase(h.name, "vary")) continue;
    std::string_view rest = h.value;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view item = trimOws(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (item.empty()) continue;
      if (item == "*") {
        star = true;
        continue;
      }
      if (!isToken(item)) continue;  // not a field name: nothing to compare
      std::string name = asciiLowerCopy(item);
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
      if (!names.empty()) names += ',';
      names += name;
      seen.push_back(std::move(name));
    }
  }
  return names;
}

std::string normalizedAcceptEncoding(std::string_view value) {
  static constexpr std::array<std::string_view, 6> kKnown = {"br",   "compress", "deflate",
                                                             "gzip", "identity", "zstd"};
  std::array<bool, kKnown.size()> accepted{};
  std::string_view rest = value;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view element = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t semi = element.find(';');
    std::string coding = asciiLowerCopy(trimOws(element.substr(0, semi)));
    if (coding == "x-gzip") coding = "gzip";
    if (coding == "x-compress") coding = "compress";
    std::string_view params =
        semi == std::string_view::npos ? std::string_view() : element.substr(semi + 1);
    for (size_t i = 0; i < kKnown.size(); ++i) {
      if (coding == kKnown[i] && acceptable(params)) accepted[i] = true;
    }
  }
  std::string out;
  for (size_t i = 0; i < kKnown.size(); ++i) {  // kKnown is sorted
    if (!accepted[i]) continue;
    if (!out.empty()) out += ',';
    out += kKnown[i];
  }
  return out;
}

void appendSecondaryKey(std::string_view names, const Request& request, std::string& out) {
  std::string_view rest = names;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    out += name;
    out += ':';
    std::string combined;
    bool present = false;
    for (const HeaderField& h : request.headers) {
      if (!equalsIgnoreCase(h.name, name)) continue;
      if (present) combined += ", ";
      combined += trimOws(h.value);
      present = true;
    }
    if (name == "accept-encoding") {
      out += normalizedAcceptEncoding(combined);
    } else if (present) {
      // Absent and empty differ: an absent field is marked with DEL, which no field value
      // can hold (RFC 9110 §5.5).
      out += combined;
    } else {
      out += '\x7f';
    }
    out += '\n';
  }
}

std::string secondaryKeyNames(std::string_view key) {
  std::string names;
  while (!key.empty()) {
    size_t nl = key.find('\n');
    std::string_view line = key.substr(0, nl);
    key = nl == std::string_view::npos ? std::string_view() : key.substr(nl + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (!names.empty()) names += ',';
    names += line.substr(0, colon);
  }
  return names;
}

}  // namespace scalws::worker::cache
