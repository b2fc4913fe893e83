// Cache keys for the cache store tests.
#pragma once

#include <string>
#include <string_view>

namespace scalws::testing {

// The primary cache key of a plain-http request for `path` on host "shop" (the parts
// scheme, host, path and an empty query, each followed by '\n').
std::string keyOf(std::string_view path);

}  // namespace scalws::testing
