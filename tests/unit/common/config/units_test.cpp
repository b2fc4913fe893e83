#include "common/config/units.h"

#include <gtest/gtest.h>

namespace scalws::common::config {
namespace {

uint64_t sizeOf(std::string_view text) {
  Result<uint64_t> r = parseSize(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : ~uint64_t{0};
}

uint64_t msOf(std::string_view text) {
  Result<uint64_t> r = parseDurationMs(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : ~uint64_t{0};
}

std::string sizeError(std::string_view text) {
  Result<uint64_t> r = parseSize(text);
  EXPECT_FALSE(r.ok()) << text;
  if (r.ok()) return "ok";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

std::string durationError(std::string_view text) {
  Result<uint64_t> r = parseDurationMs(text);
  EXPECT_FALSE(r.ok()) << text;
  if (r.ok()) return "ok";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(ParseSize, PlainNumbersAreBytes) {
  EXPECT_EQ(sizeOf("0"), 0u);
  EXPECT_EQ(sizeOf("1"), 1u);
  EXPECT_EQ(sizeOf("512"), 512u);
  EXPECT_EQ(sizeOf("007"), 7u);
}

TEST(ParseSize, SuffixesArePowersOf1024InEitherCase) {
  EXPECT_EQ(sizeOf("64k"), 64u * 1024);
  EXPECT_EQ(sizeOf("64K"), 64u * 1024);
  EXPECT_EQ(sizeOf("10m"), 10u * 1024 * 1024);
  EXPECT_EQ(sizeOf("10M"), 10u * 1024 * 1024);
  EXPECT_EQ(sizeOf("1g"), 1024u * 1024 * 1024);
  EXPECT_EQ(sizeOf("1G"), 1024u * 1024 * 1024);
  EXPECT_EQ(sizeOf("0k"), 0u);
}

TEST(ParseSize, LargestValuesAndOverflow) {
  EXPECT_EQ(sizeOf("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(sizeOf("17179869183g"), 17179869183ull << 30);
  EXPECT_EQ(sizeError("18446744073709551616"), "size \"18446744073709551616\" is too large");
  EXPECT_EQ(sizeError("17179869184g"), "size \"17179869184g\" is too large");
  EXPECT_EQ(sizeError("99999999999999999999999k"),
            "size \"99999999999999999999999k\" is too large");
}

TEST(ParseSize, RefusesOtherForms) {
  const std::string expected =
      " (expected a byte count, optionally with a k, m or g suffix, e.g. \"64k\" or \"10m\")";
  EXPECT_EQ(sizeError(""), "invalid size \"\"" + expected);
  EXPECT_EQ(sizeError("1.5m"), "invalid size \"1.5m\"" + expected);
  EXPECT_EQ(sizeError("k"), "invalid size \"k\"" + expected);
  EXPECT_EQ(sizeError("-1"), "invalid size \"-1\"" + expected);
  EXPECT_EQ(sizeError("+1"), "invalid size \"+1\"" + expected);
  EXPECT_EQ(sizeError(" 1k"), "invalid size \" 1k\"" + expected);
  EXPECT_EQ(sizeError("1k "), "invalid size \"1k \"" + expected);
  EXPECT_EQ(sizeError("1 k"), "invalid size \"1 k\"" + expected);
  EXPECT_EQ(sizeError("1kb"), "invalid size \"1kb\"" + expected);
  EXPECT_EQ(sizeError("1KiB"), "invalid size \"1KiB\"" + expected);
  EXPECT_EQ(sizeError("1t"), "invalid size \"1t\"" + expected);
  EXPECT_EQ(sizeError("0x10"), "invalid size \"0x10\"" + expected);
}

TEST(ParseDuration, PlainNumbersAreSeconds) {
  EXPECT_EQ(msOf("0"), 0u);
  EXPECT_EQ(msOf("30"), 30'000u);
}

TEST(ParseDuration, Suffixes) {
  EXPECT_EQ(msOf("500ms"), 500u);
  EXPECT_EQ(msOf("0ms"), 0u);
  EXPECT_EQ(msOf("30s"), 30'000u);
  EXPECT_EQ(msOf("2m"), 120'000u);
  EXPECT_EQ(msOf("1h"), 3'600'000u);
  EXPECT_EQ(msOf("1d"), 86'400'000u);
}

TEST(ParseDuration, LargestValuesAndOverflow) {
  EXPECT_EQ(msOf("18446744073709551615ms"), UINT64_MAX);
  EXPECT_EQ(durationError("18446744073709551616ms"),
            "duration \"18446744073709551616ms\" is too large");
  EXPECT_EQ(msOf("18446744073709551s"), 18446744073709551000ull);
  EXPECT_EQ(durationError("18446744073709552s"), "duration \"18446744073709552s\" is too large");
  EXPECT_EQ(durationError("18446744073709552"), "duration \"18446744073709552\" is too large");
  EXPECT_EQ(durationError("213503982335d"), "duration \"213503982335d\" is too large");
}

TEST(ParseDuration, UpperCaseSuffixesAreRefused) {
  const std::string hint = " (duration suffixes are lower-case: ms, s, m, h or d)";
  EXPECT_EQ(durationError("30S"), "invalid duration \"30S\"" + hint);
  EXPECT_EQ(durationError("2M"), "invalid duration \"2M\"" + hint);
  EXPECT_EQ(durationError("500MS"), "invalid duration \"500MS\"" + hint);
  EXPECT_EQ(durationError("1H"), "invalid duration \"1H\"" + hint);
}

TEST(ParseDuration, RefusesOtherForms) {
  const std::string expected =
      " (expected a number with a ms, s, m, h or d suffix, e.g. \"30s\" or \"500ms\"; a plain "
      "number is seconds)";
  EXPECT_EQ(durationError(""), "invalid duration \"\"" + expected);
  EXPECT_EQ(durationError("1.5m"), "invalid duration \"1.5m\"" + expected);
  EXPECT_EQ(durationError("1m30s"), "invalid duration \"1m30s\"" + expected);
  EXPECT_EQ(durationError("s"), "invalid duration \"s\"" + expected);
  EXPECT_EQ(durationError("-1s"), "invalid duration \"-1s\"" + expected);
  EXPECT_EQ(durationError("30 s"), "invalid duration \"30 s\"" + expected);
  EXPECT_EQ(durationError("1w"), "invalid duration \"1w\"" + expected);
  EXPECT_EQ(durationError("1sec"), "invalid duration \"1sec\"" + expected);
}

}  // namespace
}  // namespace scalws::common::config
