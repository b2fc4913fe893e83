#include "worker/http/header_field.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace scalws::worker
