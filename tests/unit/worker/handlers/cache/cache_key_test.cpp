#include "worker/handlers/cache/cache_key.h"

#include <gtest/gtest.h>

#include <vector>

#include "worker/handlers/cache/vary.h"

namespace scalws::worker::cache {
namespace {

using common::config::CacheKeyPart;

struct TestRequest {
  TestRequest(std::vector<HeaderField> h, bool tls = false) : headers(std::move(h)) {
    peer.tls = tls;
    request.headers = headers;
    request.peer = &peer;
    request.host = "shop.example";
    request.raw_path = "/a%20b/c";
    request.path = "/a b/c";
    request.query = "x=1";
    request.method_name = "GET";
  }
  std::vector<HeaderField> headers;
  PeerInfo peer;
  Request request;
};

TEST(CacheKey, DefaultPartsInOrder) {
  TestRequest t({});
  std::string key;
  appendPrimaryKey(common::config::CacheConfig{}.key, t.request, key);
  EXPECT_EQ(key, "http\nshop.example\n/a%20b/c\nx=1\n");
  TestRequest tls({}, true);
  key.clear();
  appendPrimaryKey(common::config::CacheConfig{}.key, tls.request, key);
  EXPECT_EQ(key, "https\nshop.example\n/a%20b/c\nx=1\n");
}

TEST(CacheKey, HeaderCookieAndMethodParts) {
  TestRequest t({{"Accept-Language", "fr"},
                 {"Cookie", "a=1; session=abc; b=2"},
                 {"accept-language", " en "}});
  std::vector<CacheKeyPart> parts = {{CacheKeyPart::Kind::kHeader, "accept-language"},
                                     {CacheKeyPart::Kind::kCookie, "session"},
                                     {CacheKeyPart::Kind::kCookie, "missing"},
                                     {CacheKeyPart::Kind::kMethod, ""}};
  std::string key;
  appendPrimaryKey(parts, t.request, key);
  EXPECT_EQ(key, "fr, en\nabc\n\nGET\n");
  // HEAD keys as GET: it is answered from what GET stored.
  t.request.method = Method::kHead;
  t.request.method_name = "HEAD";
  key.clear();
  appendPrimaryKey(parts, t.request, key);
  EXPECT_EQ(key, "fr, en\nabc\n\nGET\n");
}

TEST(CacheKey, Uri) {
  TestRequest t({});
  std::string uri;
  appendRequestUri(t.request, uri);
  EXPECT_EQ(uri, "http://shop.example/a%20b/c?x=1");
  t.request.query = "";
  uri.clear();
  appendRequestUri(t.request, uri);
  EXPECT_EQ(uri, "http://shop.example/a%20b/c");
}

// What an unsafe method's Location names on disk: the key a GET of that URI has.
TEST(CacheKey, TheKeyOfAUriIsTheKeyOfAGetOfIt) {
  TestRequest t({});
  std::string from_request, uri, from_uri;
  appendPrimaryKey(common::config::CacheConfig{}.key, t.request, from_request);
  appendRequestUri(t.request, uri);
  ASSERT_TRUE(primaryKeyOfUri(common::config::CacheConfig{}.key, uri, from_uri));
  EXPECT_EQ(from_uri, from_request);
  std::vector<CacheKeyPart> with_method = {{CacheKeyPart::Kind::kMethod, ""},
                                           {CacheKeyPart::Kind::kPath, ""}};
  from_uri.clear();
  ASSERT_TRUE(primaryKeyOfUri(with_method, "https://a.example/list", from_uri));
  EXPECT_EQ(from_uri, "GET\n/list\n");
  from_uri.clear();
  EXPECT_FALSE(primaryKeyOfUri({{CacheKeyPart::Kind::kCookie, "session"}}, uri, from_uri));
  EXPECT_FALSE(primaryKeyOfUri(common::config::CacheConfig{}.key, "no-scheme", from_uri));
}

TEST(CacheKey, RequestFacts) {
  TestRequest t({{"Authorization", "Basic x"}, {"Pragma", "no-cache"}});
  RequestFacts f = requestFacts(t.request);
  EXPECT_TRUE(f.authorization);
  EXPECT_TRUE(f.cache_control.no_cache);  // Pragma alone counts
  TestRequest u({{"Pragma", "no-cache"}, {"Cache-Control", "max-age=5"}});
  f = requestFacts(u.request);
  EXPECT_FALSE(f.cache_control.no_cache);  // ... but not beside a Cache-Control
  EXPECT_EQ(f.cache_control.max_age, 5u);
}

TEST(Vary, FieldNames) {
  bool star = false;
  std::vector<HeaderField> h = {{"Vary", "Accept-Encoding, User-Agent"},
                                {"vary", "accept-encoding,Accept-Language"}};
  EXPECT_EQ(varyFieldNames(h, star), "accept-encoding,user-agent,accept-language");
  EXPECT_FALSE(star);
  h = {{"Vary", "Accept, *"}};
  varyFieldNames(h, star);
  EXPECT_TRUE(star);
}

TEST(Vary, AcceptEncodingNormalised) {
  EXPECT_EQ(normalizedAcceptEncoding("gzip, br"), "br,gzip");
  EXPECT_EQ(normalizedAcceptEncoding("br;q=1.0,GZIP"), "br,gzip");
  EXPECT_EQ(normalizedAcceptEncoding("x-gzip, deflate;q=0, foo"), "gzip");
  EXPECT_EQ(normalizedAcceptEncoding("gzip;q=0.000"), "");
  EXPECT_EQ(normalizedAcceptEncoding(""), "");
}

TEST(Vary, SecondaryKeysMatchOnlyEquivalentRequests) {
  TestRequest a({{"Accept-Encoding", "gzip, br"}, {"Accept-Language", "fr"}});
  TestRequest b({{"accept-encoding", "br,gzip;q=0.8"}, {"Accept-Language", " fr"}});
  TestRequest c(std::vector<HeaderField>{{"Accept-Encoding", "gzip"}});
  std::string ka, kb, kc;
  appendSecondaryKey("accept-encoding,accept-language", a.request, ka);
  appendSecondaryKey("accept-encoding,accept-language", b.request, kb);
  appendSecondaryKey("accept-encoding,accept-language", c.request, kc);
  EXPECT_EQ(ka, "accept-encoding:br,gzip\naccept-language:fr\n");
  EXPECT_EQ(ka, kb);
  EXPECT_NE(ka, kc);
  EXPECT_EQ(kc, "accept-encoding:gzip\naccept-language:\x7f\n");  // absent, not empty
  EXPECT_EQ(secondaryKeyNames(ka), "accept-encoding,accept-language");
  EXPECT_EQ(secondaryKeyNames(""), "");
}

}  // namespace
}  // namespace scalws::worker::cache
