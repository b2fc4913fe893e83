// Datagrams as the QUIC code sees them, away from any socket: what arrived (addresses,
// ECN, bytes: common/net/datagram.h) and the one way out (DatagramSender), implemented by UdpSocket
// for real and by a recorder in tests and the fuzz target.
#pragma once

#include <ngtcp2/ngtcp2.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/net/datagram.h"

namespace scalws::worker::quic {

using common::net::Datagram;
using common::net::SocketAddress;

// The address as ngtcp2 takes it (a view: `a` must outlive it).
inline ngtcp2_addr ngtcpAddr(SocketAddress& a) {
  return ngtcp2_addr{a.get(), a.len};
}

class DatagramSender {
 public:
  // Sends `len` bytes as datagrams of `segment` bytes each (the last may be shorter) from
  // `local` to `remote`. Losses are QUIC's to recover: nothing is reported back. A sender
  // may hold them back to send with others in one call (UdpSocket::flush).
  virtual void send(const ngtcp2_addr& local, const ngtcp2_addr& remote, uint8_t ecn,
                    const uint8_t* data, size_t len, size_t segment) noexcept = 0;
  // Where the next datagrams may be written in place: a send() of bytes written at the
  // start of this space takes them without a copy. Empty: the writer uses a buffer of its
  // own.
  virtual std::span<uint8_t> sendSpace() noexcept { return {}; }

 protected:
  ~DatagramSender() = default;
};

}  // namespace scalws::worker::quic
