#include "worker/handlers/cache/hash64.h"

#include <gtest/gtest.h>

#include <string>

namespace scalws::worker::cache {
namespace {

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i);
  return s;
}

// Reference values of XXH64 (libxxhash 0.8.1).
TEST(Hash64, KnownValues) {
  EXPECT_EQ(hash64(""), 0xef46db3751d8e999ull);
  EXPECT_EQ(hash64("a"), 0xd24ec4f1a98c6e5bull);
  EXPECT_EQ(hash64("abc"), 0x44bc2cf5ad770999ull);
  EXPECT_EQ(hash64(pattern(100)), 0x6ac1e58032166597ull);
  EXPECT_EQ(hash64(std::string(1000, 'x')), 0x4cb9a3b69cb700e1ull);
  EXPECT_EQ(hash64("", 7), 0x95f0626f6f0a4409ull);
  EXPECT_EQ(hash64(pattern(100), 7), 0x80653e7e9b887cddull);
}

TEST(Hash64, PiecesGiveTheSameDigest) {
  std::string data = pattern(1000);
  for (size_t step : {1u, 3u, 7u, 31u, 32u, 33u, 500u}) {
    Hash64 h(7);
    for (size_t at = 0; at < data.size(); at += step) {
      h.update(std::string_view(data).substr(at, step));
    }
    EXPECT_EQ(h.digest(), hash64(data, 7)) << step;
  }
}

}  // namespace
}  // namespace scalws::worker::cache
