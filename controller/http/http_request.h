// HttpRequest: the head of one request to the controller's small HTTP servers (Prometheus,
// dashboard), parsed from the bytes read. Pure, for tests.
//
// Only what those servers need is kept: the method, the path and query of an origin-form
// target (RFC 9112 §3.2.1), the version and the Authorization field. A request line that
// is not `METHOD SP origin-form SP HTTP/1.x` is kInvalidArgument (400); a path holding a
// ".." segment, a backslash or a control byte too (never a file path anyway, but refusing
// it keeps routing a plain string compare).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace scalws::controller::http {

struct HttpRequest {
  std::string method;
  std::string path;           // "/api/v1/overview", no query
  std::string query;          // after '?', "" when none
  std::string authorization;  // the Authorization field's value, "" when absent
  bool head() const { return method == "HEAD"; }
};

// `head`: the bytes up to and including the blank line ending the head ("\r\n\r\n", or
// "\n\n" from lenient clients).
common::Result<HttpRequest> parseRequestHead(std::string_view head);

// The value of `key` in a query string "a=1&b=2" (no percent-decoding: the servers only
// take numbers), or nullopt-like "" with *found = false.
std::string_view queryValue(std::string_view query, std::string_view key, bool* found);

}  // namespace scalws::controller::http
