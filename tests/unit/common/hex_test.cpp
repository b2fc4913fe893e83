#include "common/hex.h"

#include <gtest/gtest.h>

namespace scalws::common {
namespace {

TEST(HexTest, RoundTripsEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  std::string hex = toHex(all);
  EXPECT_EQ(hex.size(), 512u);
  EXPECT_EQ(hex.substr(0, 6), "000102");
  EXPECT_EQ(hex.substr(506), "fdfeff");
  EXPECT_EQ(fromHex(hex), all);
}

TEST(HexTest, AcceptsUpperCase) {
  EXPECT_EQ(fromHex("AbCd"), std::string("\xab\xcd"));
}

TEST(HexTest, RefusesOddLengthsAndNonDigits) {
  EXPECT_FALSE(fromHex("abc").has_value());
  EXPECT_FALSE(fromHex("zz").has_value());
  EXPECT_FALSE(fromHex("0g").has_value());
  EXPECT_EQ(fromHex(""), std::string());
}

}  // namespace
}  // namespace scalws::common
