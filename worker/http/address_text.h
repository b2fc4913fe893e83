// The text of a client's address, as forwarding headers, CGI variables and logs write it.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <string_view>

namespace scalws::worker {

// Room for the text of any IPv4 or IPv6 address (INET6_ADDRSTRLEN is 46).
inline constexpr size_t kAddressTextSize = 48;

// How an IPv4 client of a dual-stack listener (::ffff:a.b.c.d) is written.
enum class MappedV4 {
  kDotted,  // a.b.c.d: what applications expect of X-Forwarded-For and REMOTE_ADDR
  kAsIpv6,  // ::ffff:a.b.c.d: the socket's own view, as logs keep it
};

// `address` (AF_INET or AF_INET6) written into `buf`; empty for any other family. IPv4 is
// written here rather than by inet_ntop, which formats it with sprintf: that was a tenth
// of a proxied request's user-space instructions.
std::string_view addressText(const sockaddr_storage& address, char (&buf)[kAddressTextSize],
                             MappedV4 mapped = MappedV4::kDotted);

}  // namespace scalws::worker
