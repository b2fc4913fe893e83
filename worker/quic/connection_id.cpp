#include "worker/quic/connection_id.h"

#include <gnutls/crypto.h>

namespace scalws::worker::quic {

bool makeConnectionId(uint16_t steering_id, ngtcp2_cid& out) {
  out.datalen = kCidLength;
  out.data[0] = static_cast<uint8_t>(steering_id >> 8);
  out.data[1] = static_cast<uint8_t>(steering_id);
  return gnutls_rnd(GNUTLS_RND_NONCE, out.data + 2, kCidLength - 2) == 0;
}

bool makeRoutedConnectionId(const common::net::QuicRoute& route, ngtcp2_cid& out) {
  out.datalen = kCidLength;
  std::memcpy(out.data, route.data(), route.size());
  return gnutls_rnd(GNUTLS_RND_NONCE, out.data + route.size(), kCidLength - route.size()) == 0;
}

uint16_t steeringIdOf(const uint8_t* cid, size_t len) {
  if (len < 2) return kNoSteering;
  return static_cast<uint16_t>((cid[0] << 8) | cid[1]);
}

}  // namespace scalws::worker::quic
