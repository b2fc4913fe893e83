// The host part of an authority (a Host field, HTTP/2's and HTTP/3's :authority, an
// absolute-form target), shared by every protocol.
#pragma once

#include <string_view>

namespace scalws::worker {

// Host syntax (RFC 3986 reg-name, IPv4, [IPv6]) with an optional port; returns the host
// without the port (a prefix of `authority`), or an empty view with `valid` false.
std::string_view hostWithoutPort(std::string_view authority, bool& valid);

// The same host (case-insensitive) and, where both name one, the same port.
bool sameAuthority(std::string_view a, std::string_view b);

}  // namespace scalws::worker
