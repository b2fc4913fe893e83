// Server connection IDs (RFC 9000 §5.1). Every ID this server issues is kCidLength bytes:
// the first two are the steering id of the UDP socket whose process owns the connection
// (big-endian), the rest random. The reuseport program (common/net/quic_steering.h) reads those
// two bytes and hands every packet of the connection to that socket, whatever address it
// comes from, so migration and NAT rebinding still reach the process holding the state.
//
// CidKey is a connection ID as a hashable value, for the endpoint's lookup table.
#pragma once

#include <ngtcp2/ngtcp2.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>

#include "common/net/quic_route.h"

namespace scalws::worker::quic {

inline constexpr size_t kCidLength = 16;
// A steering id no socket has: packets carrying it fall back to the kernel's hash.
inline constexpr uint16_t kNoSteering = 0xffff;

// A fresh connection ID for the socket with `steering_id`; false when the system has no
// randomness to give.
bool makeConnectionId(uint16_t steering_id, ngtcp2_cid& out);
// A fresh connection ID on an address several instances share: it starts with `route`,
// which the front reads to pass each datagram to the loop that made the ID.
bool makeRoutedConnectionId(const common::net::QuicRoute& route, ngtcp2_cid& out);
// The steering id a connection ID carries, as the reuseport program reads it.
uint16_t steeringIdOf(const uint8_t* cid, size_t len);

struct CidKey {
  uint8_t len = 0;
  uint8_t data[NGTCP2_MAX_CIDLEN] = {};

  CidKey() = default;
  CidKey(const uint8_t* bytes, size_t n) : len(static_cast<uint8_t>(n)) {
    std::memcpy(data, bytes, n);
  }
  explicit CidKey(const ngtcp2_cid& cid) : CidKey(cid.data, cid.datalen) {}
  std::string_view view() const { return {reinterpret_cast<const char*>(data), len}; }
  friend bool operator==(const CidKey& a, const CidKey& b) { return a.view() == b.view(); }
};

struct CidKeyHash {
  size_t operator()(const CidKey& key) const noexcept {
    return std::hash<std::string_view>()(key.view());
  }
};

}  // namespace scalws::worker::quic
