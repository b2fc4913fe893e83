// Splits an HTTP/1 request-target (RFC 9112 §3.2) into path, query and, for the
// absolute-form, the authority's host.
#pragma once

#include <string_view>

#include "worker/http/authority.h"
#include "worker/http/method.h"

namespace scalws::worker::http1 {

struct RequestTarget {
  enum class Form { kOrigin, kAbsolute, kAsterisk, kAuthority };
  Form form = Form::kOrigin;
  std::string_view path;
  std::string_view query;
  std::string_view authority_host;  // absolute-form only, without port (not lower-cased)
};

// False when the target is not valid for the method (e.g. "*" with GET, "example.com:80"
// without CONNECT, a relative path) or not a URI at all (a "#" fragment, a byte above 0x7F).
bool parseRequestTarget(std::string_view target, Method method, RequestTarget& out);

using worker::hostWithoutPort;

}  // namespace scalws::worker::http1
