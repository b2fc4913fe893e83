#include "tests/support/chunk_feeder.h"

#include <random>

namespace scalws::testing {

std::vector<size_t> chunkSizes(Split split, size_t total, uint32_t seed) {
  std::vector<size_t> sizes;
  switch (split) {
    case Split::kWhole:
      if (total > 0) sizes.push_back(total);
      break;
    case Split::kByteByByte:
      sizes.assign(total, 1);
      break;
    case Split::kRandom: {
      std::mt19937 rng(seed);
      std::uniform_int_distribution<size_t> dist(1, 17);
      size_t left = total;
      while (left > 0) {
        size_t n = std::min(left, dist(rng));
        sizes.push_back(n);
        left -= n;
      }
      break;
    }
  }
  return sizes;
}

}  // namespace scalws::testing
