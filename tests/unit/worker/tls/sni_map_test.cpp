#include "worker/tls/sni_map.h"

#include <gtest/gtest.h>

#include <string>

namespace scalws::worker::tls {
namespace {

TEST(SniMap, ExactNamesWinOverWildcards) {
  SniMap map;
  EXPECT_TRUE(map.add("*.example.com", 1));
  EXPECT_TRUE(map.add("www.example.com", 2));
  EXPECT_EQ(map.find("www.example.com"), 2u);
  EXPECT_EQ(map.find("api.example.com"), 1u);
}

TEST(SniMap, AWildcardCoversExactlyOneLabel) {
  SniMap map;
  map.add("*.example.com", 1);
  EXPECT_EQ(map.find("a.example.com"), 1u);
  EXPECT_EQ(map.find("example.com"), SniMap::kDefault);
  EXPECT_EQ(map.find("a.b.example.com"), SniMap::kDefault);
  EXPECT_EQ(map.find(".example.com"), SniMap::kDefault);
}

TEST(SniMap, CaseAndTrailingDotDoNotMatter) {
  SniMap map;
  map.add("shop.example.org", 3);
  map.add("*.cdn.example.org", 4);
  EXPECT_EQ(map.find("SHOP.Example.ORG"), 3u);
  EXPECT_EQ(map.find("shop.example.org."), 3u);
  EXPECT_EQ(map.find("IMG.CDN.example.org"), 4u);
}

TEST(SniMap, UnknownEmptyAndOverlongNamesGetTheDefault) {
  SniMap map;
  map.add("a.test", 1);
  EXPECT_EQ(map.find("b.test"), SniMap::kDefault);
  EXPECT_EQ(map.find(""), SniMap::kDefault);
  EXPECT_EQ(map.find(std::string(300, 'a')), SniMap::kDefault);
}

TEST(SniMap, TheFirstCertificateToClaimANameKeepsIt) {
  SniMap map;
  EXPECT_TRUE(map.add("a.test", 1));
  EXPECT_FALSE(map.add("a.test", 2));
  EXPECT_TRUE(map.add("*.test", 2));
  EXPECT_FALSE(map.add("*.test", 3));
  EXPECT_EQ(map.find("a.test"), 1u);
  EXPECT_EQ(map.find("b.test"), 2u);
  EXPECT_EQ(map.size(), 2u);
}

}  // namespace
}  // namespace scalws::worker::tls
