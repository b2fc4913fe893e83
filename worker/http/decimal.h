// Decimal digits without printf, for response heads and log lines on the request path.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scalws::worker {

// Digits of `v` into `out` (room for 20); returns how many.
inline size_t formatDecimal(uint64_t v, char* out) {
  char tmp[20];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

}  // namespace scalws::worker
