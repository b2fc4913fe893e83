#include "worker/handlers/cache/cache_control.h"

namespace scalws::worker::cache {
namespace {

// delta-seconds = 1*DIGIT (§1.2.2); nullopt when `v` is not that.
std::optional<uint64_t> deltaSeconds(std::string_view v) {
  if (v.empty()) return std::nullopt;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
    if (n > kMaxDeltaSeconds) n = kMaxDeltaSeconds;  // saturate, never wrap
  }
  return n;
}

// Sets `slot` from the directive's value unless an earlier occurrence did; a value that is
// not delta-seconds reads as `invalid`.
void setSeconds(std::optional<uint64_t>& slot, std::string_view value, bool has_value,
                uint64_t invalid) {
  if (slot.has_value()) return;
  std::optional<uint64_t> v = has_value ? deltaSeconds(value) : std::nullopt;
  slot = v.value_or(invalid);
}

// The next list element of `rest` (quoted strings may hold commas), trimmed.
std::string_view nextElement(std::string_view& rest) {
  size_t i = 0;
  bool quoted = false;
  for (; i < rest.size(); ++i) {
    char c = rest[i];
    if (quoted && c == '\\') {
      ++i;  // quoted-pair
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      break;
    }
  }
  std::string_view element = rest.substr(0, i < rest.size() ? i : rest.size());
  rest = i < rest.size() ? rest.substr(i + 1) : std::string_view();
  return trimOws(element);
}

}  // namespace

void parseCacheControlInto(std::string_view value, CacheControl& out) {
  out.present = true;
  std::string_view rest = value;
  while (!rest.empty()) {
    std::string_view element = nextElement(rest);
    if (element.empty()) continue;
    size_t eq = element.find('=');
    std::string_view name = trimOws(element.substr(0, eq));
    bool has_value = eq != std::string_view::npos;
    std::string_view arg = has_value ? trimOws(element.substr(eq + 1)) : std::string_view();
    // §5.2: a recipient accepts the quoted form of an argument too.
    if (arg.size() >= 2 && arg.front() == '"' && arg.back() == '"') {
      arg = arg.substr(1, arg.size() - 2);
    }
    if (equalsIgnoreCase(name, "no-store")) {
      out.no_store = true;
    } else if (equalsIgnoreCase(name, "no-cache")) {
      if (has_value && !arg.empty()) {
        if (out.no_cache_fields.empty()) out.no_cache_fields = arg;
      } else {
        out.no_cache = true;
      }
    } else if (equalsIgnoreCase(name, "private")) {
      if (has_value && !arg.empty()) {
        if (out.private_fields.empty()) out.private_fields = arg;
      } else {
        out.is_private = true;
      }
    } else if (equalsIgnoreCase(name, "public")) {
      out.is_public = true;
    } else if (equalsIgnoreCase(name, "must-revalidate")) {
      out.must_revalidate = true;
    } else if (equalsIgnoreCase(name, "proxy-revalidate")) {
      out.proxy_revalidate = true;
    } else if (equalsIgnoreCase(name, "max-age")) {
      setSeconds(out.max_age, arg, has_value, 0);
    } else if (equalsIgnoreCase(name, "s-maxage")) {
      setSeconds(out.s_maxage, arg, has_value, 0);
    } else if (equalsIgnoreCase(name, "stale-while-revalidate")) {
      setSeconds(out.stale_while_revalidate, arg, has_value, 0);
    } else if (equalsIgnoreCase(name, "stale-if-error")) {
      setSeconds(out.stale_if_error, arg, has_value, 0);
    } else if (equalsIgnoreCase(name, "max-stale")) {
      // §5.2.1.2: without a value, any staleness is accepted.
      if (!out.max_stale.has_value()) {
        out.max_stale = has_value ? deltaSeconds(arg).value_or(0) : kMaxDeltaSeconds;
      }
    } else if (equalsIgnoreCase(name, "min-fresh")) {
      // An unreadable min-fresh asks for more freshness than anything has.
      setSeconds(out.min_fresh, arg, has_value, kMaxDeltaSeconds);
    } else if (equalsIgnoreCase(name, "only-if-cached")) {
      out.only_if_cached = true;
    }
    // §5.2.3: unknown extensions are ignored.
  }
}

CacheControl parseCacheControl(std::span<const HeaderField> headers) {
  CacheControl out;
  for (const HeaderField& h : headers) {
    if (equalsIgnoreCase(h.name, "cache-control")) parseCacheControlInto(h.value, out);
  }
  return out;
}

bool fieldListNames(std::string_view list, std::string_view field) {
  return headerListContains(list, field);
}

}  // namespace scalws::worker::cache
