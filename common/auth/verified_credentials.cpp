#include "common/auth/verified_credentials.h"

#include <openssl/sha.h>

#include <cstring>

namespace scalws::common::auth {

size_t VerifiedCredentials::DigestHash::operator()(const Digest& d) const noexcept {
  size_t h;
  std::memcpy(&h, d.data(), sizeof(h));  // already uniform: a slice of a SHA-256
  return h;
}

VerifiedCredentials::Digest VerifiedCredentials::digestOf(std::string_view value) {
  Digest out{};
  SHA256(reinterpret_cast<const unsigned char*>(value.data()), value.size(), out.data());
  return out;
}

bool VerifiedCredentials::contains(uint64_t scope, std::string_view value, int64_t now_ms) {
  if (remembered_.empty()) return false;
  auto it = remembered_.find(digestOf(value));
  if (it == remembered_.end() || it->second.scope != scope) return false;
  if (now_ms - it->second.when_ms < ttl_ms_) return true;
  remembered_.erase(it);
  return false;
}

void VerifiedCredentials::remember(uint64_t scope, std::string_view value, int64_t now_ms) {
  if (capacity_ == 0) return;
  Digest key = digestOf(value);
  if (remembered_.size() >= capacity_ && remembered_.find(key) == remembered_.end()) {
    auto oldest = remembered_.begin();
    for (auto it = remembered_.begin(); it != remembered_.end(); ++it) {
      if (it->second.when_ms < oldest->second.when_ms) oldest = it;
    }
    remembered_.erase(oldest);
  }
  remembered_[key] = Memory{scope, now_ms};
}

}  // namespace scalws::common::auth
