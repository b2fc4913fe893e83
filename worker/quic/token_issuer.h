// The stateless tokens of a QUIC listener, all sealed with one secret (secrets.h) so any
// process of the site can check what another issued:
//   - Retry tokens (RFC 9000 §8.1.2): bind the client's address, the Retry's source CID
//     and the client's original DCID; accepted for kRetryTokenLifetime.
//   - Regular tokens (NEW_TOKEN, §8.1.3): bind the client's address only; a client that
//     presents one skips the Retry round trip on its next connection for
//     kRegularTokenLifetime.
//   - Stateless reset tokens (§10.3.2): a pure function of a connection ID, so a process
//     that lost (or never had) a connection still answers its packets with the token its
//     owner announced.
// Times are wall-clock nanoseconds (the tokens travel between processes). Pure: no
// socket, no clock of its own.
#pragma once

#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace scalws::worker::quic {

class TokenIssuer {
 public:
  static constexpr uint64_t kRetryTokenLifetime = 10ull * NGTCP2_SECONDS;
  static constexpr uint64_t kRegularTokenLifetime = 3600ull * NGTCP2_SECONDS;
  static constexpr size_t kMaxRetryToken = NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN;
  static constexpr size_t kMaxRegularToken = NGTCP2_CRYPTO_MAX_REGULAR_TOKENLEN;

  explicit TokenIssuer(const std::array<uint8_t, 32>& secret) : secret_(secret) {}

  // Each writes into `out` (room for kMax*Token) and returns the length, 0 on failure.
  size_t makeRetryToken(uint8_t* out, uint32_t version, const sockaddr* client,
                        socklen_t client_len, const ngtcp2_cid& retry_scid, const ngtcp2_cid& odcid,
                        uint64_t unix_ns) const;
  size_t makeRegularToken(uint8_t* out, const sockaddr* client, socklen_t client_len,
                          uint64_t unix_ns) const;

  // A Retry token that came back in an Initial whose DCID is `dcid`: true and the original
  // DCID when it is ours, fresh and for this client.
  bool checkRetryToken(const uint8_t* token, size_t len, uint32_t version, const sockaddr* client,
                       socklen_t client_len, const ngtcp2_cid& dcid, uint64_t unix_ns,
                       ngtcp2_cid& odcid) const;
  bool checkRegularToken(const uint8_t* token, size_t len, const sockaddr* client,
                         socklen_t client_len, uint64_t unix_ns) const;

  // The stateless reset token of `cid` (NGTCP2_STATELESS_RESET_TOKENLEN bytes).
  bool resetToken(const ngtcp2_cid& cid, uint8_t* out) const;

 private:
  std::array<uint8_t, 32> secret_;
};

}  // namespace scalws::worker::quic
