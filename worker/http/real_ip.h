// [real_ip]: the client's address taken from a header that trusted proxies set.
//
// Only when the request came from one of `from` (the connection's peer, itself possibly
// named by a PROXY protocol header) is the header read at all. Its addresses — every
// field line of it in order, each a comma-separated list — are walked from the right: an
// address in `from` is one more trusted hop and is skipped; the first one that is not is
// the client. When every address is trusted the leftmost is taken. An element that is not
// an address ("unknown", an obfuscated name) ends the walk; the last address found before
// it (or the peer, when none) stands. Addresses may carry a port ("192.0.2.1:4711",
// "[2001:db8::1]:4711"), kept as the client's port; otherwise the port is 0.
#pragma once

#include <sys/socket.h>

#include <string_view>

#include "common/config/site_config.h"
#include "worker/http/request.h"

namespace scalws::worker {

// The client address `config` finds for `request`; false when the peer is not trusted or
// the header names no usable address (the peer stands then).
bool findRealClient(const common::config::RealIpConfig& config, const Request& request,
                    sockaddr_storage& client);

// Makes what findRealClient() found the request's peer (in the request's arena).
void applyRealIp(const common::config::RealIpConfig& config, Request& request);

// One address as a forwarding header writes it: IPv4 or IPv6, bracketed or not, with an
// optional port. False for anything else.
bool parseForwardedAddress(std::string_view text, sockaddr_storage& out);

}  // namespace scalws::worker
