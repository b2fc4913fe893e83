// Datagrams as the QUIC code sees them, away from any socket: what arrived (addresses,
// ECN, bytes) and the one way out (DatagramSender), implemented by UdpSocket for real and by
// a recorder in tests and the fuzz target.
#pragma once

#include <ngtcp2/ngtcp2.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace scalws::worker::quic {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t len = 0;

  sockaddr* get() { return reinterpret_cast<sockaddr*>(&storage); }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  ngtcp2_addr addr() { return ngtcp2_addr{get(), len}; }
};

struct Datagram {
  SocketAddress local;   // the address the client sent to (with the socket's port)
  SocketAddress remote;  // the client
  uint8_t ecn = 0;       // RFC 3168 codepoint from the IP header
  const uint8_t* data = nullptr;
  size_t len = 0;
};

class DatagramSender {
 public:
  // Sends `len` bytes as datagrams of `segment` bytes each (the last may be shorter) from
  // `local` to `remote`. Losses are QUIC's to recover: nothing is reported back.
  virtual void send(const ngtcp2_addr& local, const ngtcp2_addr& remote, uint8_t ecn,
                    const uint8_t* data, size_t len, size_t segment) noexcept = 0;

 protected:
  ~DatagramSender() = default;
};

}  // namespace scalws::worker::quic
