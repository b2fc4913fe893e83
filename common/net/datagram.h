// A UDP datagram as received, away from any socket: the address it was sent to, the
// sender, the ECN bits and the bytes. The QUIC code (worker/quic) and the front of a
// shared address (front/quic_front) read the same shape.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace scalws::common::net {

// The largest datagram a QUIC endpoint here reads, past the 1500-byte Ethernet MTU with
// room to spare; larger ones are dropped. The front and the worker size their buffers
// (and the channel between them) by it.
inline constexpr size_t kMaxQuicDatagram = 2048;

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t len = 0;

  sockaddr* get() { return reinterpret_cast<sockaddr*>(&storage); }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

struct Datagram {
  SocketAddress local;   // the address the client sent to (with the socket's port)
  SocketAddress remote;  // the client
  uint8_t ecn = 0;       // RFC 3168 codepoint from the IP header
  const uint8_t* data = nullptr;
  size_t len = 0;
};

}  // namespace scalws::common::net
