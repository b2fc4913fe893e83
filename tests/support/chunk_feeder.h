// Splits input for codec tests: whole, byte by byte, and in seeded random chunks, so every
// codec test can prove it does not depend on where reads happen to end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace scalws::testing {

enum class Split { kWhole, kByteByByte, kRandom };

// The chunk sizes a split produces for `total` bytes (seeded: the same seed, same sizes).
std::vector<size_t> chunkSizes(Split split, size_t total, uint32_t seed = 1);

inline const char* splitName(Split s) {
  switch (s) {
    case Split::kWhole:
      return "whole";
    case Split::kByteByByte:
      return "byte-by-byte";
    case Split::kRandom:
      return "random";
  }
  return "?";
}

inline constexpr Split kAllSplits[] = {Split::kWhole, Split::kByteByByte, Split::kRandom};

}  // namespace scalws::testing
