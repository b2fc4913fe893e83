// Invalidation (RFC 9111 §4.4): a non-error answer to an unsafe request makes the cache
// drop what it stored for the request's URI, and for the URIs in the answer's Location
// and Content-Location when they are on the same host (a URI of another origin is never
// invalidated, so one site cannot empty another's entries).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "worker/http/method.h"
#include "worker/http/request.h"

namespace scalws::worker::cache {

// RFC 9110 §9.2.1: GET, HEAD, OPTIONS and TRACE are safe; every other method (an unknown
// one included) is not.
bool isSafeMethod(Method method);

// Whether an answer with `status` to a request with `method` invalidates (§4.4: a
// non-error status, 2xx or 3xx, to an unsafe method).
bool invalidatesOnAnswer(Method method, uint16_t status);

// The URIs (in the form of cache_key.h's appendRequestUri) to invalidate: the request's,
// then `location` and `content_location` (field values, absolute or relative references)
// when they resolve to the request's scheme and host. Fragments are dropped.
std::vector<std::string> invalidatedUris(const Request& request, std::string_view location,
                                         std::string_view content_location);

}  // namespace scalws::worker::cache
