// The request head parser of the controller's small HTTP servers.
#include "controller/http/http_request.h"

#include <gtest/gtest.h>

namespace scalws::controller::http {
namespace {

TEST(ParseRequestHead, KeepsMethodPathQueryAndAuthorization) {
  common::Result<HttpRequest> r = parseRequestHead(
      "GET /api/v1/events?limit=5 HTTP/1.1\r\nHost: x\r\nauthorization:  Basic YTpi \r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->path, "/api/v1/events");
  EXPECT_EQ(r->query, "limit=5");
  EXPECT_EQ(r->authorization, "Basic YTpi");
  EXPECT_FALSE(r->head());
  r = parseRequestHead("HEAD / HTTP/1.0\n\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->head());
  EXPECT_EQ(r->path, "/");
  EXPECT_EQ(r->authorization, "");
}

TEST(ParseRequestHead, RefusesWhatIsNotAnOriginFormRequest) {
  for (const char* bad : {
           "GET /metrics\r\n\r\n",                                            // no version
           "GET /metrics SPDY/3\r\n\r\n",                                     // not HTTP/1.x
           "GET /metrics HTTP/1.1x\r\n\r\n",                                  // trailing junk
           " / HTTP/1.1\r\n\r\n",                                             // no method
           "GET http://a/ HTTP/1.1\r\n\r\n",                                  // absolute form
           "GET * HTTP/1.1\r\n\r\n",                                          // asterisk form
           "GET /a/../b HTTP/1.1\r\n\r\n",                                    // dot-dot segment
           "GET /.. HTTP/1.1\r\n\r\n",                                        //
           "GET /a\\b HTTP/1.1\r\n\r\n",                                      // backslash
           "GET /a\x01 HTTP/1.1\r\n\r\n",                                     // control byte
           "\r\n\r\n",                                                        // nothing
           "GET / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n",  // twice
       }) {
    EXPECT_FALSE(parseRequestHead(bad).ok()) << bad;
  }
  // A dot-dot inside a name is just a name.
  EXPECT_TRUE(parseRequestHead("GET /a..b/..c HTTP/1.1\r\n\r\n").ok());
}

TEST(QueryValue, FindsKeysAndTellsAbsentFromEmpty) {
  bool found = false;
  EXPECT_EQ(queryValue("a=1&minutes=30", "minutes", &found), "30");
  EXPECT_TRUE(found);
  EXPECT_EQ(queryValue("a=1&b", "b", &found), "");
  EXPECT_TRUE(found);
  EXPECT_EQ(queryValue("a=1", "minutes", &found), "");
  EXPECT_FALSE(found);
  EXPECT_EQ(queryValue("", "a", &found), "");
  EXPECT_FALSE(found);
}

}  // namespace
}  // namespace scalws::controller::http
