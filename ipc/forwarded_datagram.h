// A QUIC datagram the front of a shared address passes to a worker loop, on the same
// channel it hands TCP connections over on (front_messages.h). A hand-off is one byte with
// a descriptor; a datagram is one message of kForwardedHeader bytes and the datagram's own:
//
//   0      'Q'
//   1      the ECN bits the datagram arrived with
//   2      the address family: 4 or 6
//   3      0
//   4-5    the client's port            6-7    the port the client sent to
//   8-23   the client's address         24-39  the address the client sent to (IPv4: the
//   40-43  the client's IPv6 scope id   44-47  first 4 bytes) and its scope id
//
// The worker answers from its own socket in the address's UDP group, from the address the
// client sent to, so the client sees one peer. Every number is big-endian but the scope
// ids (host order: they never leave the machine).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/net/datagram.h"
#include "common/status.h"

namespace scalws::ipc {

inline constexpr size_t kForwardedHeader = 48;
inline constexpr uint8_t kForwardedMagic = 'Q';

// Writes the header of `datagram` (its addresses and ECN bits) into `out`
// (kForwardedHeader bytes); false when an address is neither IPv4 nor IPv6 or the two
// families differ.
bool encodeForwardedHeader(const common::net::Datagram& datagram, uint8_t* out);
// The datagram in `message`, into `out` (its data points into `message`); kInvalidArgument
// when the message is not one.
common::Status decodeForwardedDatagram(std::span<const uint8_t> message,
                                       common::net::Datagram& out);

}  // namespace scalws::ipc
