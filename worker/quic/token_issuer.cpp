#include "worker/quic/token_issuer.h"

namespace scalws::worker::quic {

size_t TokenIssuer::makeRetryToken(uint8_t* out, uint32_t version, const sockaddr* client,
                                   socklen_t client_len, const ngtcp2_cid& retry_scid,
                                   const ngtcp2_cid& odcid, uint64_t unix_ns) const {
  ngtcp2_ssize n =
      ngtcp2_crypto_generate_retry_token(out, secret_.data(), secret_.size(), version, client,
                                         client_len, &retry_scid, &odcid, unix_ns);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

size_t TokenIssuer::makeRegularToken(uint8_t* out, const sockaddr* client, socklen_t client_len,
                                     uint64_t unix_ns) const {
  ngtcp2_ssize n = ngtcp2_crypto_generate_regular_token(out, secret_.data(), secret_.size(), client,
                                                        client_len, unix_ns);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

bool TokenIssuer::checkRetryToken(const uint8_t* token, size_t len, uint32_t version,
                                  const sockaddr* client, socklen_t client_len,
                                  const ngtcp2_cid& dcid, uint64_t unix_ns,
                                  ngtcp2_cid& odcid) const {
  if (len == 0 || token[0] != NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) return false;
  return ngtcp2_crypto_verify_retry_token(&odcid, token, len, secret_.data(), secret_.size(),
                                          version, client, client_len, &dcid, kRetryTokenLifetime,
                                          unix_ns) == 0;
}

bool TokenIssuer::checkRegularToken(const uint8_t* token, size_t len, const sockaddr* client,
                                    socklen_t client_len, uint64_t unix_ns) const {
  if (len == 0 || token[0] != NGTCP2_CRYPTO_TOKEN_MAGIC_REGULAR) return false;
  return ngtcp2_crypto_verify_regular_token(token, len, secret_.data(), secret_.size(), client,
                                            client_len, kRegularTokenLifetime, unix_ns) == 0;
}

bool TokenIssuer::resetToken(const ngtcp2_cid& cid, uint8_t* out) const {
  return ngtcp2_crypto_generate_stateless_reset_token(out, secret_.data(), secret_.size(), &cid) ==
         0;
}

}  // namespace scalws::worker::quic
