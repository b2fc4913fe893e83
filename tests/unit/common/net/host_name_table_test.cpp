#include "common/net/host_name_table.h"

#include <gtest/gtest.h>

namespace scalws::common::net {
namespace {

constexpr uint32_t kNone = HostNameTable::kNone;

HostNameTable shopAndBlog() {
  HostNameTable t;
  EXPECT_TRUE(t.add("shop.example", 0));
  EXPECT_TRUE(t.add("*.shop.example", 0));
  EXPECT_TRUE(t.add("api.shop.example", 1));
  EXPECT_TRUE(t.add("blog.example", 2));
  return t;
}

TEST(HostNameTable, ExactNamesWinOverWildcards) {
  HostNameTable t = shopAndBlog();
  EXPECT_EQ(t.find("shop.example"), 0u);
  EXPECT_EQ(t.find("www.shop.example"), 0u);
  EXPECT_EQ(t.find("api.shop.example"), 1u);
  EXPECT_EQ(t.find("blog.example"), 2u);
}

TEST(HostNameTable, AWildcardStandsForOneLabel) {
  HostNameTable t = shopAndBlog();
  EXPECT_EQ(t.find("a.b.shop.example"), kNone);
  EXPECT_EQ(t.find(".shop.example"), kNone);
  EXPECT_EQ(t.find("example"), kNone);
  HostNameTable only_wild;
  ASSERT_TRUE(only_wild.add("*.shop.example", 4));
  EXPECT_EQ(only_wild.find("shop.example"), kNone);  // the wildcard does not cover its base
}

TEST(HostNameTable, UnknownNamesGoToTheDefault) {
  HostNameTable t = shopAndBlog();
  EXPECT_EQ(t.find("other.example"), kNone);
  EXPECT_EQ(t.find(""), kNone);
  t.setDefault(2);
  EXPECT_EQ(t.find("other.example"), 2u);
  EXPECT_EQ(t.find(""), 2u);
  EXPECT_EQ(t.find("127.0.0.1"), 2u);
  EXPECT_EQ(t.claimant("other.example"), kNone);
  EXPECT_EQ(t.find("shop.example"), 0u);
}

TEST(HostNameTable, ATrailingDotIsTheSameName) {
  HostNameTable t = shopAndBlog();
  EXPECT_EQ(t.find("blog.example."), 2u);
  EXPECT_EQ(t.find("x.shop.example."), 0u);
  EXPECT_EQ(t.find("."), kNone);
}

TEST(HostNameTable, TheFirstClaimKeepsAName) {
  HostNameTable t;
  EXPECT_TRUE(t.add("a.example", 0));
  EXPECT_FALSE(t.add("a.example", 1));
  EXPECT_TRUE(t.add("*.a.example", 1));
  EXPECT_FALSE(t.add("*.a.example", 0));
  EXPECT_EQ(t.find("a.example"), 0u);
  EXPECT_EQ(t.find("x.a.example"), 1u);
  EXPECT_EQ(t.size(), 2u);
}

TEST(HostNameTable, EmptyTable) {
  HostNameTable t;
  EXPECT_TRUE(t.empty());
  t.setDefault(0);
  EXPECT_FALSE(t.empty());
}

TEST(NormalizeHostName, FoldsCaseAndDropsTheTrailingDot) {
  std::string out;
  ASSERT_TRUE(normalizeHostName("Shop.EXAMPLE.", out));
  EXPECT_EQ(out, "shop.example");
  ASSERT_TRUE(normalizeHostName("a_b-c.d9", out));
  EXPECT_EQ(out, "a_b-c.d9");
}

TEST(NormalizeHostName, RefusesWhatIsNotAName) {
  std::string out = "kept";
  EXPECT_FALSE(normalizeHostName("", out));
  EXPECT_FALSE(normalizeHostName(".", out));
  EXPECT_FALSE(normalizeHostName("a..b", out));
  EXPECT_FALSE(normalizeHostName(".a", out));
  EXPECT_FALSE(normalizeHostName("a b", out));
  EXPECT_FALSE(normalizeHostName("a/b", out));
  EXPECT_FALSE(normalizeHostName(std::string("a\0b", 3), out));
  EXPECT_FALSE(normalizeHostName("\xc3\xa9.example", out));
  EXPECT_FALSE(normalizeHostName(std::string(254, 'a'), out));
  EXPECT_EQ(out, "kept");
}

}  // namespace
}  // namespace scalws::common::net
