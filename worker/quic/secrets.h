// The secrets of one QUIC listener, derived (HKDF-SHA256, RFC 5869) from the site's shared
// secret — the one TLS session tickets come from (tls/ticket_keys.h: the ticket key file, or
// the secret the supervising parent or the controller shares with every worker) — so every
// process of a site agrees on them without talking:
//   - `token`: seals Retry and NEW_TOKEN tokens (RFC 9000 §8.1) and derives stateless
//     reset tokens (§10.3.2). A Retry token may come back to another process, and a reset
//     must carry the token the connection's owner announced even after that owner died.
//   - `ticket`: the GnuTLS session ticket master key, so a client resumes on any process.
//     GnuTLS rotates the keys it derives from it by the clock.
// The label (the listener's address) keeps listeners' tokens and tickets apart.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace scalws::worker::quic {

struct QuicSecrets {
  std::array<uint8_t, 32> token{};
  std::array<uint8_t, 64> ticket{};
};

common::Result<QuicSecrets> deriveQuicSecrets(std::string_view site_secret, std::string_view label);

}  // namespace scalws::worker::quic
