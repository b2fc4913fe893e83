#include "worker/handlers/cache/invalidation.h"

#include "worker/handlers/cache/cache_key.h"
#include "worker/http/header_field.h"

namespace scalws::worker::cache {
namespace {

// The authority's host, lower-case, without userinfo or port ("[::1]" keeps its brackets
// off, as Request::host has them).
std::string hostOf(std::string_view authority) {
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    return asciiLowerCopy(authority.substr(1, close == std::string_view::npos ? 0 : close - 1));
  }
  return asciiLowerCopy(authority.substr(0, authority.find(':')));
}

// The URI `reference` resolves to against the request, when it is on the request's scheme
// and host; empty otherwise.
std::string sameOriginUri(const Request& request, std::string_view reference) {
  reference = trimOws(reference);
  reference = reference.substr(0, reference.find('#'));
  if (reference.empty()) return {};
  std::string_view scheme = requestScheme(request);
  std::string_view path_and_query;
  size_t colon = reference.find(':');
  size_t slash = reference.find('/');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon < slash)) {
    // Absolute URI: same scheme and host only.
    if (asciiLowerCopy(reference.substr(0, colon)) != scheme) return {};
    std::string_view rest = reference.substr(colon + 1);
    if (rest.substr(0, 2) != "//") return {};
    rest.remove_prefix(2);
    size_t end = rest.find_first_of("/?");
    if (hostOf(rest.substr(0, end)) != request.host) return {};
    path_and_query = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  } else if (reference.substr(0, 2) == "//") {
    std::string_view rest = reference.substr(2);
    size_t end = rest.find_first_of("/?");
    if (hostOf(rest.substr(0, end)) != request.host) return {};
    path_and_query = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  } else {
    path_and_query = reference;
  }
  std::string uri(scheme);
  uri += "://";
  uri += request.host;
  if (path_and_query.empty() || path_and_query.front() == '?') {
    uri += '/';
  } else if (path_and_query.front() != '/') {
    // A relative path: against the directory of the request's path (RFC 3986 §5.2.3).
    std::string_view base = request.raw_path;
    uri += base.substr(0, base.rfind('/') + 1);
  }
  uri += path_and_query;
  return uri;
}

}  // namespace

bool isSafeMethod(Method method) {
  switch (method) {
    case Method::kGet:
    case Method::kHead:
    case Method::kOptions:
    case Method::kTrace:
      return true;
    default:
      return false;
  }
}

bool invalidatesOnAnswer(Method method, uint16_t status) {
  return !isSafeMethod(method) && status >= 200 && status < 400;
}

std::vector<std::string> invalidatedUris(const Request& request, std::string_view location,
                                         std::string_view content_location) {
  std::vector<std::string> uris;
  std::string own;
  appendRequestUri(request, own);
  uris.push_back(std::move(own));
  for (std::string_view reference : {location, content_location}) {
    std::string uri = sameOriginUri(request, reference);
    if (uri.empty()) continue;
    bool seen = false;
    for (const std::string& u : uris) seen = seen || u == uri;
    if (!seen) uris.push_back(std::move(uri));
  }
  return uris;
}

}  // namespace scalws::worker::cache
