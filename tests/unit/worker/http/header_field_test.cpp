#include "worker/http/header_field.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace scalws::worker {
namespace {

TEST(HeaderFieldTest, AsciiLowerCopyLowersLettersOnly) {
  EXPECT_EQ(asciiLowerCopy("Accept-Encoding"), "accept-encoding");
  EXPECT_EQ(asciiLowerCopy("EXAMPLE.org:8080"), "example.org:8080");
  EXPECT_EQ(asciiLowerCopy(""), "");
  // Bytes outside ASCII are left as they are (no locale).
  EXPECT_EQ(asciiLowerCopy("\xC3\x89T\xC3\xA9"), "\xC3\x89t\xC3\xA9");
  EXPECT_EQ(asciiLowerCopy(std::string("A\0B", 3)), std::string("a\0b", 3));
}

TEST(HeaderFieldTest, TrimOwsTakesSpacesAndTabsOffBothEnds) {
  EXPECT_EQ(trimOws(" \tgzip\t "), "gzip");
  EXPECT_EQ(trimOws("a b"), "a b");
  EXPECT_EQ(trimOws(" \t "), "");
}

bool referenceEqualsIgnoreCase(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (asciiLower(a[i]) != asciiLower(b[i])) return false;
  }
  return true;
}

// The comparison works on whole words, so every byte value is tried at every offset of
// every size against its case partner, its neighbours and the byte 0x20 away (which folds
// only for letters: '@' and '`', '[' and '{', 0xC1 and 0xE1 must stay different).
TEST(HeaderFieldTest, EqualsIgnoreCaseMatchesAByteByByteFoldAtEveryOffset) {
  size_t checked = 0;
  for (size_t size = 1; size <= 24; ++size) {
    std::string base(size, 'k');
    for (size_t at = 0; at < size; ++at) {
      for (int x = 0; x < 256; ++x) {
        for (int delta : {0, 1, -1, 0x20, -0x20}) {
          int y = x + delta;
          if (y < 0 || y > 255) continue;
          std::string a = base;
          std::string b = base;
          a[at] = static_cast<char>(x);
          b[at] = static_cast<char>(y);
          ASSERT_EQ(equalsIgnoreCase(a, b), referenceEqualsIgnoreCase(a, b))
              << "size " << size << " offset " << at << " bytes " << x << " " << y;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 300000u);
  EXPECT_TRUE(equalsIgnoreCase("Transfer-Encoding", "transfer-encoding"));
  EXPECT_FALSE(equalsIgnoreCase("transfer-encodinG", "transfer-encodinf"));
  EXPECT_FALSE(equalsIgnoreCase("date", "dates"));
  EXPECT_TRUE(equalsIgnoreCase("", ""));
}

TEST(HeaderFieldTest, EqualsIgnoreCaseAgreesWithAByteByByteFoldOnRandomPairs) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200000; ++round) {
    size_t size = rng() % 40;
    std::string a(size, '\0');
    for (char& c : a) c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 'a' + rng() % 26);
    std::string b = a;
    for (char& c : b) {
      if (rng() % 2 == 0) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    }
    if (size > 0 && rng() % 3 == 0) b[rng() % size] = static_cast<char>(rng() % 256);
    ASSERT_EQ(equalsIgnoreCase(a, b), referenceEqualsIgnoreCase(a, b)) << round;
  }
}

TEST(HeaderFieldTest, IsTokenRefusesABadByteAtEveryOffset) {
  for (size_t size = 1; size <= 13; ++size) {
    for (size_t at = 0; at < size; ++at) {
      for (int x = 0; x < 256; ++x) {
        std::string name(size, 'x');
        name[at] = static_cast<char>(x);
        ASSERT_EQ(isToken(name), isTokenChar(static_cast<unsigned char>(x)))
            << "size " << size << " offset " << at << " byte " << x;
      }
    }
  }
  EXPECT_FALSE(isToken(""));
  EXPECT_TRUE(isToken("X-Forwarded-For"));
  EXPECT_FALSE(isToken("Content Type"));
  EXPECT_FALSE(isToken("host:"));
  EXPECT_TRUE(isTokenChar('~'));
  EXPECT_FALSE(isTokenChar('"'));
  EXPECT_FALSE(isTokenChar(0x80));
}

}  // namespace
}  // namespace scalws::worker
