// The one path every error a client sees goes through: a small HTML page with
// the status and its reason, never formatted by handlers themselves, or the route's (or
// the site's) own page for a 4xx or 5xx (error_pages.h).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "worker/http/header_field.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"

namespace scalws::worker {

// `extra` carries what the status needs (Allow for 405, Retry-After for 503, Content-Range
// for 416). `close` asks the connection to close after the response.
void sendError(Request& request, ResponseWriter& writer, uint16_t status,
               std::span<const HeaderField> extra = {}, bool close = false) noexcept;

// The head of an error answer of `length` bytes: its `content_type` and up to seven of
// `extra` (copied into `fields`, which must outlive the head), closing the connection
// when `close`. The built-in page and a site's own error page alike.
ResponseHead errorHead(uint16_t status, std::string_view content_type,
                       std::span<const HeaderField> extra, uint64_t length, bool close,
                       std::array<HeaderField, 8>& fields) noexcept;

// A backend (upstream, PHP pool) failed the request: its 502/503/504 page when no byte of
// the response went out yet (a 503 says Retry-After: 1, the backend is busy or down), else
// the response is cut short, the only honest answer once a head was sent.
void sendBackendFailure(Request& request, ResponseWriter& writer, uint16_t status,
                        bool head_sent) noexcept;

}  // namespace scalws::worker
