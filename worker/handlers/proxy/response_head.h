// The head the client gets for an upstream's response: its status and end-to-end fields,
// never its framing or connection management (RFC 9110 §7.6.1), which the writer makes
// anew for the client's protocol.
//
// Dropped: Connection and the fields it names, Keep-Alive, Proxy-Connection, TE, Trailer,
// Transfer-Encoding, Upgrade (kept in a tunnel's 101), Content-Length (the writer sends it
// from ResponseHead::content_length), Date and Server (the writer's own, as nginx does),
// remove_response_headers and the fields set_response_headers replaces; those are added,
// and a Via field of ours follows the upstream's when the route asks.
#pragma once

#include <vector>

#include "worker/handlers/proxy/proxy_route.h"
#include "worker/handlers/proxy/response_parser.h"
#include "worker/http/header_field.h"

namespace scalws::worker::proxy {

// Fills `out` with views into `head` and `route` (valid while both are). `upgrade`: the
// head is a 101 the tunnel follows.
void filterResponseHeaders(const UpstreamResponseHead& head, const ProxyRoute& route, bool upgrade,
                           std::vector<HeaderField>& out);
// The fields an interim (1xx) answer passes on: the upstream's, without hop-by-hop ones or
// those the route removes (the route's own fields and Via are for the final answer).
void filterInterimHeaders(const UpstreamResponseHead& head, const ProxyRoute& route,
                          std::vector<HeaderField>& out);

}  // namespace scalws::worker::proxy
