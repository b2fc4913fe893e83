// VerifiedCredentials: a small memory of Authorization values that passed a password
// check, so a client sending the same credentials again is let in without another hash
// (bcrypt costs milliseconds, and a page load is many requests).
//
// Values are kept as their SHA-256, never in clear. Each is remembered for `ttl_ms`; at
// most `capacity` are, the one remembered longest ago making room for a new one. Failures
// are never remembered, so a wrong password always costs its hash. `scope` tells apart
// what the credentials were checked against (a users file), so a value that passed one
// file is not taken for another (one value is remembered for one scope at a time). Not
// thread-safe: one per event loop (or per single-threaded server).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace scalws::common::auth {

class VerifiedCredentials {
 public:
  VerifiedCredentials(size_t capacity, int64_t ttl_ms) : capacity_(capacity), ttl_ms_(ttl_ms) {}

  // True when `value` passed within the last ttl_ms (an expired memory is forgotten).
  bool contains(uint64_t scope, std::string_view value, int64_t now_ms);
  void remember(uint64_t scope, std::string_view value, int64_t now_ms);
  size_t size() const { return remembered_.size(); }

 private:
  using Digest = std::array<unsigned char, 32>;
  struct DigestHash {
    size_t operator()(const Digest& d) const noexcept;
  };
  struct Memory {
    uint64_t scope = 0;
    int64_t when_ms = 0;  // when it passed
  };
  static Digest digestOf(std::string_view value);

  size_t capacity_;
  int64_t ttl_ms_;
  std::unordered_map<Digest, Memory, DigestHash> remembered_;
};

}  // namespace scalws::common::auth
