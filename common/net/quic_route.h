// QUIC on an address several instances share: the front process (front/) receives every
// datagram there and passes each on to the worker loop that owns its connection. It knows
// the owner from the first bytes of the destination connection ID, which the worker wrote
// when it issued the ID: a route made of the instance's name and the worker's slot and loop.
//
// The route is computed, never assigned, so the front and the workers agree without a
// table (a front that outlived a controller restart still routes connections of workers
// that outlived it too). Two instances on one address whose names hash alike would share
// a route; the controller refuses that pair (a 1 in 2^32 chance per pair).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scalws::common::net {

inline constexpr size_t kQuicRouteLength = 7;
using QuicRoute = std::array<uint8_t, kQuicRouteLength>;

// Bytes 0-3: FNV-1a of the instance name (big-endian); bytes 4-6: the slot (12 bits) and
// the loop (12 bits), each truncated to 12 bits (a worker has far fewer).
QuicRoute quicRouteOf(std::string_view instance, uint32_t slot, uint32_t loop);
// The instance part alone, as a number (for the controller's collision check).
uint32_t quicInstanceHash(std::string_view instance);

}  // namespace scalws::common::net
