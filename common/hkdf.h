// HKDF with SHA-256 (RFC 5869) over OpenSSL's KDF: how a process turns one secret it was
// given into the several keys it needs (session ticket keys per listener and window, QUIC
// token and ticket keys), each its own salt and info so no two uses share a key.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/status.h"

namespace scalws::common {

// Extracts from `key` with `salt`, then expands with `info` to fill `out` (at most 255 ×
// 32 bytes). An error only when OpenSSL lacks HKDF or fails; `out` is then unspecified.
Status hkdfSha256(std::string_view key, std::string_view salt, std::string_view info,
                  std::span<uint8_t> out);

}  // namespace scalws::common
