#include "common/hkdf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace scalws::common {
namespace {

std::string hkdfBytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string hkdfHex(const std::vector<uint8_t>& b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t c : b) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// RFC 5869 Appendix A.1 (basic test case with SHA-256).
TEST(HkdfTest, MatchesRfc5869TestCase1) {
  std::string ikm(22, '\x0b');
  std::string salt =
      hkdfBytes({0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c});
  std::string info = hkdfBytes({0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9});
  std::vector<uint8_t> okm(42);
  ASSERT_TRUE(hkdfSha256(ikm, salt, info, okm).ok());
  EXPECT_EQ(hkdfHex(okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

// The same case in its two steps, on one context: the PRK of A.1, then the OKM from it.
TEST(HkdfTest, ExtractThenExpandGivesRfc5869TestCase1) {
  std::vector<uint8_t> ikm(22, 0x0b);
  std::vector<uint8_t> salt = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                               0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c};
  std::vector<uint8_t> info = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9};
  HkdfSha256 hkdf;
  ASSERT_TRUE(hkdf.available());
  std::vector<uint8_t> prk(32);
  ASSERT_TRUE(hkdf.extract(ikm, salt, std::span<uint8_t, 32>(prk.data(), 32)));
  EXPECT_EQ(hkdfHex(prk), "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5");
  std::vector<uint8_t> okm(42);
  ASSERT_TRUE(hkdf.expand(prk, info, okm));
  EXPECT_EQ(hkdfHex(okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

// RFC 5869 Appendix A.3 (zero-length salt and info).
TEST(HkdfTest, MatchesRfc5869TestCase3WithEmptySaltAndInfo) {
  std::string ikm(22, '\x0b');
  std::vector<uint8_t> okm(42);
  ASSERT_TRUE(hkdfSha256(ikm, "", "", okm).ok());
  EXPECT_EQ(hkdfHex(okm),
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8");
}

TEST(HkdfTest, SaltAndInfoEachSeparateTheKeys) {
  std::vector<uint8_t> a(32), b(32), c(32);
  ASSERT_TRUE(hkdfSha256("secret", "salt-a", "info", a).ok());
  ASSERT_TRUE(hkdfSha256("secret", "salt-b", "info", b).ok());
  ASSERT_TRUE(hkdfSha256("secret", "salt-a", "other", c).ok());
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  std::vector<uint8_t> again(32);
  ASSERT_TRUE(hkdfSha256("secret", "salt-a", "info", again).ok());
  EXPECT_EQ(a, again);
}

}  // namespace
}  // namespace scalws::common
