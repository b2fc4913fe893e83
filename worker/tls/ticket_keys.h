// Session ticket keys that every process of a site computes on its own and agrees on, with
// no IPC: each key is HKDF-SHA256 (RFC 5869) of a shared secret, salted per listener and
// expanded with the number of the rotation window the wall clock is in. A new key seals
// tickets each window; the previous window's key still opens them (and the client gets a
// fresh ticket), so a ticket lives between one and two windows.
//
// The secret is read from `ticket_key_file` or generated once per server start by the
// process that builds the first snapshot — the supervising parent, before it forks — so
// children and later reloads share it (processTicketSecret()); under the controller every
// worker of an instance adopts the secret the controller derives for it.
//
// Thread-safe: the handshake callback of any loop thread may ask; derived keys are cached
// per window under a mutex (a handshake is far from the per-request path).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "common/status.h"

namespace scalws::worker::tls {

struct TicketKey {
  std::array<uint8_t, 16> name{};  // sent in the clear in the ticket; identifies the key
  std::array<uint8_t, 32> aes{};   // AES-256-CBC
  std::array<uint8_t, 32> hmac{};  // HMAC-SHA256
};

class TicketKeyRing {
 public:
  static constexpr size_t kMinSecret = 32;

  // `secret` holds at least kMinSecret bytes; `label` tells listeners apart; `period_ms` is
  // the rotation (> 0).
  TicketKeyRing(std::string secret, std::string label, uint64_t period_ms);

  static common::Result<TicketKey> derive(std::string_view secret, std::string_view label,
                                          uint64_t window);

  uint64_t windowAt(uint64_t unix_ms) const { return unix_ms / period_ms_; }
  uint64_t periodMs() const { return period_ms_; }
  // The key new tickets are sealed with at `unix_ms`; false when derivation failed.
  bool encryptionKey(uint64_t unix_ms, TicketKey& out) const;
  // The key named `name` (16 bytes): 1 when it is the current window's, 2 when it is the
  // previous window's (accept, and issue a fresh ticket), 0 when unknown or expired.
  int decryptionKey(const uint8_t* name, uint64_t unix_ms, TicketKey& out) const;

 private:
  bool keyFor(uint64_t window, TicketKey& out) const;

  std::string secret_;
  std::string label_;
  uint64_t period_ms_;
  mutable std::mutex mutex_;
  mutable uint64_t cached_window_[2] = {UINT64_MAX, UINT64_MAX};
  mutable TicketKey cached_key_[2];
};

// 32 random bytes drawn on the first call and returned unchanged afterwards (for the life
// of the process and of its forked children), unless adoptProcessTicketSecret() came first.
const std::string& processTicketSecret();

// Under the controller the workers of an instance are not forked from one parent: the
// controller hands each the instance's secret, adopted before the first snapshot is built.
// False (and nothing changes) once processTicketSecret() has been answered or when
// `secret` is shorter than TicketKeyRing::kMinSecret.
bool adoptProcessTicketSecret(std::string secret);

// Reads a ticket key file: at least kMinSecret bytes, used whole as the HKDF secret.
common::Result<std::string> readTicketSecretFile(const std::string& path);

// Milliseconds since the Unix epoch (every process of a host agrees on it).
uint64_t unixTimeMs();

}  // namespace scalws::worker::tls
