// The listening sockets of a site, for the standalone worker and the controller alike:
// TCP, non-blocking, close-on-exec, SO_REUSEADDR, IPv6 sockets v6-only, TCP_NODELAY (which
// accepted sockets inherit), and SO_REUSEPORT so every worker (process or loop) can have
// its own accept queue on the same address; and the UDP sockets of HTTP/3 listeners, one
// per worker in one reuseport group.
#pragma once

#include "common/config/site_config.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::common::net {

// Bound, not yet listening. Without reuse_port the bind fails when anything else holds
// the address (the controller's "is it free?" probe); EADDRINUSE says so in words.
Result<UniqueFd> bindTcpSocket(const config::ListenConfig& listen, bool reuse_port);
// Bound with SO_REUSEPORT and listening.
Result<UniqueFd> openListenSocket(const config::ListenConfig& listen);
// A UDP socket for the listener's QUIC side: bound with SO_REUSEPORT (no SO_REUSEADDR,
// which for UDP would let unrelated sockets share the port without the group's steering),
// non-blocking, close-on-exec, IPv6 v6-only. Without reuse_port: the "is it free?" probe.
Result<UniqueFd> bindUdpSocket(const config::ListenConfig& listen, bool reuse_port = true);

}  // namespace scalws::common::net
