#include "common/net/quic_route.h"

namespace scalws::common::net {

uint32_t quicInstanceHash(std::string_view instance) {
  // FNV-1a: fixed forever, since a front and a worker of different builds must agree.
  uint32_t hash = 2166136261u;
  for (char c : instance) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 16777619u;
  }
  return hash;
}

QuicRoute quicRouteOf(std::string_view instance, uint32_t slot, uint32_t loop) {
  uint32_t hash = quicInstanceHash(instance);
  uint32_t place = ((slot & 0xfffu) << 12) | (loop & 0xfffu);
  return QuicRoute{static_cast<uint8_t>(hash >> 24),  static_cast<uint8_t>(hash >> 16),
                   static_cast<uint8_t>(hash >> 8),   static_cast<uint8_t>(hash),
                   static_cast<uint8_t>(place >> 16), static_cast<uint8_t>(place >> 8),
                   static_cast<uint8_t>(place)};
}

}  // namespace scalws::common::net
