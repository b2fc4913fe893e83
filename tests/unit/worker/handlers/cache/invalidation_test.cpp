#include "worker/handlers/cache/invalidation.h"

#include <gtest/gtest.h>

namespace scalws::worker::cache {
namespace {

TEST(Invalidation, UnsafeMethodsWithNonErrorAnswers) {
  EXPECT_TRUE(invalidatesOnAnswer(Method::kPost, 200));
  EXPECT_TRUE(invalidatesOnAnswer(Method::kDelete, 204));
  EXPECT_TRUE(invalidatesOnAnswer(Method::kPut, 303));
  EXPECT_TRUE(invalidatesOnAnswer(Method::kOther, 200));  // an unknown method is unsafe
  EXPECT_FALSE(invalidatesOnAnswer(Method::kPost, 404));
  EXPECT_FALSE(invalidatesOnAnswer(Method::kPost, 500));
  EXPECT_FALSE(invalidatesOnAnswer(Method::kGet, 200));
  EXPECT_FALSE(invalidatesOnAnswer(Method::kOptions, 200));
}

TEST(Invalidation, LocationsOfTheSameOriginOnly) {
  PeerInfo peer;
  peer.tls = true;
  Request r;
  r.peer = &peer;
  r.host = "shop.example";
  r.raw_path = "/cart/items";
  r.query = "id=4";
  std::vector<std::string> uris =
      invalidatedUris(r, "https://Shop.Example:8443/cart#top", "other/x?y=1");
  ASSERT_EQ(uris.size(), 3u);
  EXPECT_EQ(uris[0], "https://shop.example/cart/items?id=4");
  EXPECT_EQ(uris[1], "https://shop.example/cart");
  EXPECT_EQ(uris[2], "https://shop.example/cart/other/x?y=1");
  // Another host, another scheme: left alone.
  uris = invalidatedUris(r, "https://evil.example/cart", "http://shop.example/cart");
  EXPECT_EQ(uris.size(), 1u);
  uris = invalidatedUris(r, "//shop.example/list", "/cart/items?id=4");
  ASSERT_EQ(uris.size(), 2u);  // the request's own URI only once
  EXPECT_EQ(uris[1], "https://shop.example/list");
  EXPECT_EQ(invalidatedUris(r, "", "").size(), 1u);
}

}  // namespace
}  // namespace scalws::worker::cache
