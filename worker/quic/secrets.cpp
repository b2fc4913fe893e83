#include "worker/quic/secrets.h"

#include <openssl/crypto.h>

#include <cstring>
#include <string>

#include "common/hkdf.h"

namespace scalws::worker::quic {
namespace {

constexpr std::string_view kSaltPrefix = "scalws quic secrets v1";

}  // namespace

common::Result<QuicSecrets> deriveQuicSecrets(std::string_view site_secret,
                                              std::string_view label) {
  std::string salt(kSaltPrefix);
  salt.push_back('\0');
  salt.append(label);
  QuicSecrets out;
  uint8_t bytes[sizeof(out.token) + sizeof(out.ticket)];
  common::Status derived = common::hkdfSha256(site_secret, salt, "token+ticket", bytes);
  if (!derived.ok()) return derived;
  std::memcpy(out.token.data(), bytes, out.token.size());
  std::memcpy(out.ticket.data(), bytes + out.token.size(), out.ticket.size());
  OPENSSL_cleanse(bytes, sizeof(bytes));
  return out;
}

}  // namespace scalws::worker::quic
