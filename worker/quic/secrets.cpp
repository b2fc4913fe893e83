#include "worker/quic/secrets.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <cstring>
#include <string>

namespace scalws::worker::quic {
namespace {

constexpr std::string_view kSaltPrefix = "scalws quic secrets v1";

}  // namespace

common::Result<QuicSecrets> deriveQuicSecrets(std::string_view site_secret,
                                              std::string_view label) {
  std::string salt(kSaltPrefix);
  salt.push_back('\0');
  salt.append(label);
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (kdf == nullptr) return common::internalError("HKDF is not available in OpenSSL");
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  EVP_KDF_free(kdf);
  if (ctx == nullptr) return common::internalError("EVP_KDF_CTX_new failed");
  char digest[] = "SHA256";
  char info[] = "token+ticket";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(site_secret.data()),
                                        site_secret.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt.data(), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, sizeof(info) - 1),
      OSSL_PARAM_construct_end(),
  };
  QuicSecrets out;
  uint8_t bytes[sizeof(out.token) + sizeof(out.ticket)];
  int ok = EVP_KDF_derive(ctx, bytes, sizeof(bytes), params);
  EVP_KDF_CTX_free(ctx);
  if (ok != 1) return common::internalError("HKDF derivation failed");
  std::memcpy(out.token.data(), bytes, out.token.size());
  std::memcpy(out.ticket.data(), bytes + out.token.size(), out.ticket.size());
  OPENSSL_cleanse(bytes, sizeof(bytes));
  return out;
}

}  // namespace scalws::worker::quic
