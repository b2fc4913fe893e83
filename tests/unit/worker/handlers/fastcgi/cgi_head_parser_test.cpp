// The CGI response head: Status, Location, dropped headers, splits, refusals.
#include "worker/handlers/fastcgi/cgi_head_parser.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/chunk_feeder.h"

namespace scalws::worker::fastcgi {
namespace {

using scalws::testing::chunkSizes;
using scalws::testing::kAllSplits;
using scalws::testing::splitName;

// Feeds the whole input split as asked; returns the outcome and the body bytes that followed.
CgiHeadParser::Outcome parse(CgiHeadParser& p, const std::string& input,
                             scalws::testing::Split split, std::string& body) {
  size_t pos = 0;
  body.clear();
  CgiHeadParser::Outcome outcome = CgiHeadParser::Outcome::kNeedMore;
  for (size_t n : chunkSizes(split, input.size(), 3)) {
    std::string_view piece(input.data() + pos, n);
    pos += n;
    if (outcome == CgiHeadParser::Outcome::kDone) {
      body.append(piece);
      continue;
    }
    CgiHeadParser::Result r = p.feed(piece);
    outcome = r.outcome;
    if (outcome == CgiHeadParser::Outcome::kError) return outcome;
    if (outcome == CgiHeadParser::Outcome::kDone) body.append(piece.substr(r.consumed));
  }
  return outcome;
}

std::string headersOf(const CgiHeadParser& p) {
  std::string s;
  for (const auto& h : p.headers()) s += std::string(h.name) + "=" + std::string(h.value) + ";";
  return s;
}

TEST(CgiHeadParser, StatusHeadersAndBodyInEverySplit) {
  std::string input =
      "Status: 404 Not Found\r\nX-Powered-By: PHP/8.2\r\nContent-Length: 3\r\n"
      "Content-type: text/html\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nServer: php\r\n\r\n"
      "abc\r\n\r\nmore";
  for (auto split : kAllSplits) {
    CgiHeadParser p;
    std::string body;
    ASSERT_EQ(parse(p, input, split, body), CgiHeadParser::Outcome::kDone) << splitName(split);
    EXPECT_EQ(p.status(), 404);
    EXPECT_EQ(headersOf(p),
              "X-Powered-By=PHP/8.2;Content-type=text/html;Set-Cookie=a=1;Set-Cookie=b=2;");
    EXPECT_EQ(body, "abc\r\n\r\nmore") << splitName(split);
  }
}

TEST(CgiHeadParser, BareLineFeedsAndDefaults) {
  CgiHeadParser p;
  std::string body;
  ASSERT_EQ(parse(p, "Content-Type: text/plain\n\nhi", scalws::testing::Split::kWhole, body),
            CgiHeadParser::Outcome::kDone);
  EXPECT_EQ(p.status(), 200);
  EXPECT_EQ(body, "hi");
  p.reset();
  ASSERT_EQ(parse(p, "\r\nbody", scalws::testing::Split::kByteByByte, body),
            CgiHeadParser::Outcome::kDone);
  EXPECT_TRUE(p.headers().empty());
  EXPECT_EQ(body, "body");
}

TEST(CgiHeadParser, LocationWithoutStatusIsA302) {
  CgiHeadParser p;
  std::string body;
  ASSERT_EQ(parse(p, "Location: /login\r\n\r\n", scalws::testing::Split::kWhole, body),
            CgiHeadParser::Outcome::kDone);
  EXPECT_EQ(p.status(), 302);
  EXPECT_EQ(headersOf(p), "Location=/login;");
  p.reset();
  ASSERT_EQ(parse(p, "Status: 301\r\nLocation: /x\r\n\r\n", scalws::testing::Split::kWhole, body),
            CgiHeadParser::Outcome::kDone);
  EXPECT_EQ(p.status(), 301);
}

TEST(CgiHeadParser, RefusesBadHeads) {
  const char* bad[] = {
      "Status: abc\r\n\r\n",  "Status: 99\r\n\r\n",    "Status: 100 Continue\r\n\r\n",
      "Status: 2000\r\n\r\n", "no colon here\r\n\r\n", "Bad Name: x\r\n\r\n",
      "X: a\001b\r\n\r\n",    ": empty\r\n\r\n",
  };
  for (const char* input : bad) {
    CgiHeadParser p;
    std::string body;
    EXPECT_EQ(parse(p, input, scalws::testing::Split::kWhole, body), CgiHeadParser::Outcome::kError)
        << input;
  }
}

TEST(CgiHeadParser, HeadLimit) {
  CgiHeadParser p(64);
  std::string body;
  EXPECT_EQ(parse(p, "X: " + std::string(100, 'a'), scalws::testing::Split::kRandom, body),
            CgiHeadParser::Outcome::kError);
  CgiHeadParser q(64);
  EXPECT_EQ(
      parse(q, "X: " + std::string(40, 'a') + "\r\n\r\n", scalws::testing::Split::kWhole, body),
      CgiHeadParser::Outcome::kDone);
}

}  // namespace
}  // namespace scalws::worker::fastcgi
