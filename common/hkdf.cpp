#include "common/hkdf.h"

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

namespace scalws::common {
namespace {

std::span<const uint8_t> bytesOf(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

void HkdfSha256::CtxFree::operator()(EVP_KDF_CTX* ctx) const {
  EVP_KDF_CTX_free(ctx);
}

HkdfSha256::HkdfSha256() {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (kdf == nullptr) return;
  ctx_.reset(EVP_KDF_CTX_new(kdf));
  EVP_KDF_free(kdf);
}

bool HkdfSha256::step(int mode, std::span<const uint8_t> key, std::span<const uint8_t> salt,
                      std::span<const uint8_t> info, std::span<uint8_t> out) {
  if (!ctx_) return false;
  char digest[] = "SHA256";
  // OpenSSL's parameters are not const; it only reads these.
  auto octets = [](const char* name, std::span<const uint8_t> bytes) {
    return OSSL_PARAM_construct_octet_string(name, const_cast<uint8_t*>(bytes.data()),
                                             bytes.size());
  };
  // Only the parameters the step uses: OpenSSL 3.0 fails an expand handed an empty salt.
  OSSL_PARAM params[6];
  size_t n = 0;
  params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  params[n++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
  params[n++] = octets(OSSL_KDF_PARAM_KEY, key);
  if (mode != EVP_KDF_HKDF_MODE_EXPAND_ONLY) params[n++] = octets(OSSL_KDF_PARAM_SALT, salt);
  if (mode != EVP_KDF_HKDF_MODE_EXTRACT_ONLY) params[n++] = octets(OSSL_KDF_PARAM_INFO, info);
  params[n] = OSSL_PARAM_construct_end();
  return EVP_KDF_derive(ctx_.get(), out.data(), out.size(), params) == 1;
}

bool HkdfSha256::derive(std::span<const uint8_t> key, std::span<const uint8_t> salt,
                        std::span<const uint8_t> info, std::span<uint8_t> out) {
  return step(EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, key, salt, info, out);
}

bool HkdfSha256::extract(std::span<const uint8_t> ikm, std::span<const uint8_t> salt,
                         std::span<uint8_t, 32> prk) {
  return step(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, ikm, salt, {}, prk);
}

bool HkdfSha256::expand(std::span<const uint8_t> prk, std::span<const uint8_t> info,
                        std::span<uint8_t> out) {
  return step(EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, {}, info, out);
}

Status hkdfSha256(std::string_view key, std::string_view salt, std::string_view info,
                  std::span<uint8_t> out) {
  HkdfSha256 hkdf;
  if (!hkdf.available()) return internalError("HKDF is not available in OpenSSL");
  if (!hkdf.derive(bytesOf(key), bytesOf(salt), bytesOf(info), out)) {
    return internalError("HKDF derivation failed");
  }
  return okStatus();
}

}  // namespace scalws::common
