// HKDF with SHA-256 (RFC 5869) over OpenSSL's KDF: how a process turns one secret it was
// given into the several keys it needs (session ticket keys per listener and window, QUIC
// token and ticket keys), each its own salt and info so no two uses share a key; and the
// separate extract and expand steps of a key schedule (QUIC's Initial keys).
#pragma once

#include <openssl/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/status.h"

namespace scalws::common {

// One OpenSSL HKDF context for several steps. Each step returns false when OpenSSL fails,
// `out` then unspecified.
class HkdfSha256 {
 public:
  HkdfSha256();  // fetches OpenSSL's HKDF: available() is false without it
  bool available() const { return ctx_ != nullptr; }

  // Extract then expand, filling `out` (at most 255 × 32 bytes).
  bool derive(std::span<const uint8_t> key, std::span<const uint8_t> salt,
              std::span<const uint8_t> info, std::span<uint8_t> out);
  // HKDF-Extract: the 32-byte pseudorandom key of `ikm` with `salt`.
  bool extract(std::span<const uint8_t> ikm, std::span<const uint8_t> salt,
               std::span<uint8_t, 32> prk);
  // HKDF-Expand of a pseudorandom key.
  bool expand(std::span<const uint8_t> prk, std::span<const uint8_t> info, std::span<uint8_t> out);

 private:
  struct CtxFree {
    void operator()(EVP_KDF_CTX* ctx) const;
  };
  bool step(int mode, std::span<const uint8_t> key, std::span<const uint8_t> salt,
            std::span<const uint8_t> info, std::span<uint8_t> out);

  std::unique_ptr<EVP_KDF_CTX, CtxFree> ctx_;
};

// Extracts from `key` with `salt`, then expands with `info` to fill `out` (at most 255 ×
// 32 bytes). An error only when OpenSSL lacks HKDF or fails; `out` is then unspecified.
Status hkdfSha256(std::string_view key, std::string_view salt, std::string_view info,
                  std::span<uint8_t> out);

}  // namespace scalws::common
