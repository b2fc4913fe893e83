#include "worker/handlers/cache/cache_key.h"

namespace scalws::worker::cache {
namespace {

// Every line of field `name`, joined with ", " (RFC 9110 §5.3: the same list).
void appendCombinedField(const Request& request, std::string_view name, std::string& out) {
  bool first = true;
  for (const HeaderField& h : request.headers) {
    if (!equalsIgnoreCase(h.name, name)) continue;
    if (!first) out += ", ";
    out += trimOws(h.value);
    first = false;
  }
}

}  // namespace

std::string_view requestScheme(const Request& request) {
  return request.peer != nullptr && request.peer->tls ? "https" : "http";
}

void appendPrimaryKey(const std::vector<common::config::CacheKeyPart>& parts,
                      const Request& request, std::string& out) {
  using Kind = common::config::CacheKeyPart::Kind;
  for (const common::config::CacheKeyPart& part : parts) {
    switch (part.kind) {
      case Kind::kScheme:
        out += requestScheme(request);
        break;
      case Kind::kHost:
        out += request.host;
        break;
      case Kind::kPath:
        out += request.raw_path;
        break;
      case Kind::kQuery:
        out += request.query;
        break;
      case Kind::kMethod:
        // HEAD is answered from what GET stored, so both key as GET.
        out += request.isHead() ? std::string_view("GET") : request.method_name;
        break;
      case Kind::kHeader:
        appendCombinedField(request, part.name, out);
        break;
      case Kind::kCookie:
        out += cookieValue(request, part.name);
        break;
    }
    out += '\n';
  }
}

bool primaryKeyOfUri(const std::vector<common::config::CacheKeyPart>& parts, std::string_view uri,
                     std::string& out) {
  using Kind = common::config::CacheKeyPart::Kind;
  size_t scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) return false;
  std::string_view scheme = uri.substr(0, scheme_end);
  std::string_view rest = uri.substr(scheme_end + 3);
  size_t path_at = rest.find('/');
  if (path_at == std::string_view::npos) return false;
  std::string_view host = rest.substr(0, path_at);
  std::string_view target = rest.substr(path_at);
  size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  for (const common::config::CacheKeyPart& part : parts) {
    switch (part.kind) {
      case Kind::kScheme:
        out += scheme;
        break;
      case Kind::kHost:
        out += host;
        break;
      case Kind::kPath:
        out += path;
        break;
      case Kind::kQuery:
        out += query;
        break;
      case Kind::kMethod:
        out += "GET";
        break;
      case Kind::kHeader:
      case Kind::kCookie:
        return false;
    }
    out += '\n';
  }
  return true;
}

void appendRequestUri(const Request& request, std::string& out) {
  out += requestScheme(request);
  out += "://";
  out += request.host;
  out += request.raw_path;
  if (!request.query.empty()) {
    out += '?';
    out += request.query;
  }
}

std::string_view cookieValue(const Request& request, std::string_view name) {
  for (const HeaderField& h : request.headers) {
    if (!equalsIgnoreCase(h.name, "cookie")) continue;
    std::string_view rest = h.value;
    while (!rest.empty()) {
      size_t semi = rest.find(';');
      std::string_view pair = trimOws(rest.substr(0, semi));
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos) continue;
      if (trimOws(pair.substr(0, eq)) == name) return trimOws(pair.substr(eq + 1));
    }
  }
  return {};
}

RequestFacts requestFacts(const Request& request) {
  RequestFacts facts;
  facts.method = request.method;
  bool pragma_no_cache = false;
  for (const HeaderField& h : request.headers) {
    if (equalsIgnoreCase(h.name, "authorization")) {
      facts.authorization = true;
    } else if (equalsIgnoreCase(h.name, "cache-control")) {
      parseCacheControlInto(h.value, facts.cache_control);
    } else if (equalsIgnoreCase(h.name, "pragma")) {
      pragma_no_cache = pragma_no_cache || headerListContains(h.value, "no-cache");
    }
  }
  // RFC 9111 §5.4: Pragma: no-cache counts as Cache-Control: no-cache only when the
  // request has no Cache-Control of its own.
  if (pragma_no_cache && !facts.cache_control.present) facts.cache_control.no_cache = true;
  return facts;
}

}  // namespace scalws::worker::cache
