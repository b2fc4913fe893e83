// XXH64 (the xxHash 64-bit algorithm, seed included), fed in pieces: the cache's key hash
// and the checksum of an entry on disk. Not a defence against a forger — a shared cache's
// entries come from its own workers — but against a disk that returns what it was not
// given (a torn write, a truncated file, flipped bits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scalws::worker::cache {

class Hash64 {
 public:
  explicit Hash64(uint64_t seed = 0);
  void update(const void* data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  uint64_t digest() const;

 private:
  uint64_t v_[4];
  uint64_t seed_;
  uint64_t total_ = 0;
  unsigned char buffer_[32];
  size_t buffered_ = 0;
};

uint64_t hash64(std::string_view data, uint64_t seed = 0);

}  // namespace scalws::worker::cache
