// The upstream response codec: every split of the input, each framing, interim and upgrade
// heads, and every bad-framing case refused.
#include "worker/handlers/proxy/response_parser.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/chunk_feeder.h"

namespace scalws::worker::proxy {
namespace {

using scalws::testing::chunkSizes;
using scalws::testing::kAllSplits;
using scalws::testing::Split;
using scalws::testing::splitName;

struct Parsed {
  ResponseParser::Outcome outcome = ResponseParser::Outcome::kNeedMore;
  std::string error;
  std::vector<uint16_t> statuses;                            // every head, interim ones included
  std::vector<std::pair<std::string, std::string>> headers;  // of the last head
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;
  bool keep_alive = false;
  std::string body;
  std::string leftover;  // bytes after the response
};

class Collector : public ResponseParserCallbacks {
 public:
  explicit Collector(Parsed& out) : out_(out) {}
  void onResponseHead(const UpstreamResponseHead& head) override {
    out_.statuses.push_back(head.status);
    out_.headers.clear();
    for (const auto& h : head.headers) out_.headers.emplace_back(h.name, h.value);
    out_.framing = head.framing;
    out_.content_length = head.content_length;
    out_.keep_alive = head.keep_alive;
  }
  void onResponseBody(std::string_view data) override { out_.body.append(data); }

 private:
  Parsed& out_;
};

// Feeds `input` in the pieces `split` makes, the way the exchange does: bytes the parser did
// not consume are presented again with the next piece. `eof`: the upstream closes after.
Parsed parse(const std::string& input, Split split = Split::kWhole, bool head_request = false,
             bool eof = false, uint32_t seed = 1) {
  Parsed out;
  Collector collector(out);
  ResponseParser parser(collector, ResponseLimits{});
  parser.reset(head_request);
  std::string pending;
  size_t pos = 0;
  for (size_t size : chunkSizes(split, input.size(), seed)) {
    pending.append(input, pos, size);
    pos += size;
    ResponseParser::Result r = parser.dispatch(pending.data(), pending.size());
    EXPECT_LE(r.consumed, pending.size());
    pending.erase(0, r.consumed);
    out.outcome = r.outcome;
    if (r.outcome == ResponseParser::Outcome::kError) {
      out.error = r.error;
      return out;
    }
    if (r.outcome != ResponseParser::Outcome::kNeedMore) {
      out.leftover = pending + input.substr(pos);
      return out;
    }
  }
  if (eof) {
    ResponseParser::Result r = parser.finishEof();
    out.outcome = r.outcome;
    out.error = r.error;
  }
  return out;
}

void expectAllSplits(const std::string& input, const std::string& body, BodyFraming framing,
                     const std::string& leftover = "") {
  for (Split split : kAllSplits) {
    for (uint32_t seed = 1; seed <= (split == Split::kRandom ? 20u : 1u); ++seed) {
      SCOPED_TRACE(std::string(splitName(split)) + " seed " + std::to_string(seed));
      Parsed p = parse(input, split, false, false, seed);
      EXPECT_EQ(p.outcome, ResponseParser::Outcome::kComplete) << p.error;
      EXPECT_EQ(p.body, body);
      EXPECT_EQ(p.framing, framing);
      EXPECT_EQ(p.leftover, leftover);
    }
  }
}

TEST(ResponseParser, ContentLengthBody) {
  expectAllSplits(
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhelloNEXT", "hello",
      BodyFraming::kContentLength, "NEXT");
  Parsed p = parse("HTTP/1.1 200 OK\r\nX-A:  spaced value \t\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(p.outcome, ResponseParser::Outcome::kComplete);
  ASSERT_EQ(p.headers.size(), 2u);
  EXPECT_EQ(p.headers[0], (std::pair<std::string, std::string>{"X-A", "spaced value"}));
  EXPECT_TRUE(p.keep_alive);
  EXPECT_EQ(p.statuses, std::vector<uint16_t>{200});
  // A value may hold colons and be empty; the last field needs no trailing whitespace.
  p = parse("HTTP/1.1 204 No Content\r\nLocation: http://a:8080/b\r\nX-Empty:\r\nX-Z:z\r\n\r\n");
  EXPECT_EQ(p.outcome, ResponseParser::Outcome::kComplete);
  EXPECT_EQ(p.headers, (std::vector<std::pair<std::string, std::string>>{
                           {"Location", "http://a:8080/b"}, {"X-Empty", ""}, {"X-Z", "z"}}));
}

TEST(ResponseParser, ChunkedBodyWithExtensionsAndTrailers) {
  expectAllSplits(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n"
      "6;name=\"v\" ; other\r\n world\r\n"
      "A \r\n0123456789\r\n"
      "0\r\nX-Checksum: abc\r\nX-Other:\r\n\r\nREST",
      "hello world0123456789", BodyFraming::kChunked, "REST");
  expectAllSplits("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", "",
                  BodyFraming::kChunked);
}

TEST(ResponseParser, BodyUntilClose) {
  Parsed p = parse("HTTP/1.1 200 OK\r\n\r\nall of it", Split::kRandom, false, true);
  EXPECT_EQ(p.outcome, ResponseParser::Outcome::kComplete);
  EXPECT_EQ(p.body, "all of it");
  EXPECT_EQ(p.framing, BodyFraming::kUntilClose);
  EXPECT_FALSE(p.keep_alive);
  // An HTTP/1.0 answer is never kept, even with a length.
  Parsed old = parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx");
  EXPECT_EQ(old.outcome, ResponseParser::Outcome::kComplete);
  EXPECT_FALSE(old.keep_alive);
  EXPECT_FALSE(
      parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx").keep_alive);
}

TEST(ResponseParser, NoBodyResponsesEndWithTheirHead) {
  for (const char* input : {"HTTP/1.1 204 No Content\r\n\r\nEXTRA",
                            "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\nEXTRA"}) {
    Parsed p = parse(input);
    EXPECT_EQ(p.outcome, ResponseParser::Outcome::kComplete) << input;
    EXPECT_EQ(p.body, "");
    EXPECT_EQ(p.leftover, "EXTRA");  // the exchange refuses it: a body where none may be
  }
  Parsed head = parse("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", Split::kWhole, true);
  EXPECT_EQ(head.outcome, ResponseParser::Outcome::kComplete);
  EXPECT_EQ(head.content_length, 1234u);
  EXPECT_EQ(head.framing, BodyFraming::kNone);
  Parsed head_chunked =
      parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", Split::kWhole, true);
  EXPECT_EQ(head_chunked.outcome, ResponseParser::Outcome::kComplete);
  EXPECT_TRUE(head_chunked.keep_alive);
}

TEST(ResponseParser, InterimResponsesPrecedeTheFinalOne) {
  for (Split split : kAllSplits) {
    Parsed p = parse(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        split);
    EXPECT_EQ(p.outcome, ResponseParser::Outcome::kComplete) << splitName(split);
    EXPECT_EQ(p.statuses, (std::vector<uint16_t>{100, 103, 200}));
    EXPECT_EQ(p.body, "ok");
  }
}

TEST(ResponseParser, UpgradeStopsAtItsHead) {
  Parsed p = parse(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
      "\x81\x02hi",
      Split::kByteByByte);
  EXPECT_EQ(p.outcome, ResponseParser::Outcome::kUpgrade);
  EXPECT_EQ(p.statuses, std::vector<uint16_t>{101});
  EXPECT_EQ(p.leftover, "\x81\x02hi");
}

TEST(ResponseParser, StatusLineForms) {
  EXPECT_EQ(parse("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n").outcome,
            ResponseParser::Outcome::kComplete);
  EXPECT_EQ(parse("HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n").statuses,
            std::vector<uint16_t>{404});
  EXPECT_EQ(parse("HTTP/1.1 200 \xc3\xa9t\xc3\xa9\r\nContent-Length: 0\r\n\r\n").outcome,
            ResponseParser::Outcome::kComplete);
}

struct BadCase {
  const char* name;
  std::string input;
  std::string error;
};

TEST(ResponseParser, RefusesBadFraming) {
  const BadCase cases[] = {
      {"cl and te", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
       "both Content-Length and Transfer-Encoding"},
      {"te and cl", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
       "both Content-Length and Transfer-Encoding"},
      {"differing cl", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
       "invalid or differing Content-Length"},
      {"differing cl list", "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n",
       "invalid or differing Content-Length"},
      {"signed cl", "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n",
       "invalid or differing Content-Length"},
      {"hex cl", "HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\n",
       "invalid or differing Content-Length"},
      {"empty cl", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
       "invalid or differing Content-Length"},
      {"huge cl", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
       "invalid or differing Content-Length"},
      {"te gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
       "unsupported transfer coding"},
      {"te twice",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
       "unsupported transfer coding"},
      {"te xchunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n",
       "unsupported transfer coding"},
      {"te http/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
       "Transfer-Encoding in an HTTP/1.0 response"},
      {"te on 204", "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
       "Transfer-Encoding on a 204 or 304 response"},
      {"cl on 204", "HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n",
       "Content-Length on a 204 response"},
      {"framing on 1xx", "HTTP/1.1 100 Continue\r\nContent-Length: 0\r\n\r\n",
       "framing fields on a 1xx response"},
      {"space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n",
       "malformed header field"},
      {"te space before colon", "HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\n\r\n",
       "malformed header field"},
      {"no colon", "HTTP/1.1 200 OK\r\nX-A\r\n\r\n", "malformed header field"},
      {"empty name", "HTTP/1.1 200 OK\r\n: x\r\n\r\n", "malformed header field"},
      {"delimiter in name", "HTTP/1.1 200 OK\r\nX(A): 1\r\n\r\n", "malformed header field"},
      {"non-ascii name", "HTTP/1.1 200 OK\r\nX-\xC3\xA9: 1\r\n\r\n", "malformed header field"},
      {"no colon, not last", "HTTP/1.1 200 OK\r\nX-A\r\nX-B: 1\r\n\r\n", "malformed header field"},
      {"obs-fold", "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\n\r\n",
       "obsolete line folding in the response head"},
      {"bare lf", "HTTP/1.1 200 OK\nContent-Length: 0\n\n", "bare LF in the response head"},
      {"bare cr", "HTTP/1.1 200 OK\r\nX-A: a\rb\r\n\r\n", "bare CR in the response head"},
      {"nul", std::string("HTTP/1.1 200 OK\r\nX-A: a\0b\r\n\r\n", 30),
       "control character in the response head"},
      {"ctl", "HTTP/1.1 200 OK\r\nX-A: a\x01\r\n\r\n", "control character in the response head"},
      {"bad version", "HTTP/2.0 200 OK\r\n\r\n", "malformed status line"},
      {"bad status", "HTTP/1.1 20 OK\r\n\r\n", "malformed status line"},
      {"status range", "HTTP/1.1 600 Odd\r\n\r\n", "status code out of range"},
      {"no status line", "\r\nHTTP/1.1 200 OK\r\n\r\n", "malformed status line"},
      {"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n",
       "malformed chunk size"},
      {"negative chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
       "malformed chunk size"},
      {"chunk overflow",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
       "chunk size too large"},
      {"chunk no crlf", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n",
       "chunk data not followed by CRLF"},
      {"chunk lf only", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n",
       "malformed chunk size"},
      {"chunk size bare cr", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\rabc\r\n",
       "chunk size line not ended by CRLF"},
      {"chunk ext ctl", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;a\x01\r\nabc\r\n",
       "control character in a chunk extension"},
      {"chunk ext long",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;" + std::string(5000, 'a') + "\r\n",
       "chunk extensions too long"},
      {"bad trailer",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n",
       "malformed trailer field"},
      {"last chunk bare", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\rX",
       "last chunk not ended by CRLF"},
      {"huge head", "HTTP/1.1 200 OK\r\nX-Big: " + std::string(70 * 1024, 'a') + "\r\n\r\n",
       "response head too large"},
  };
  for (const BadCase& c : cases) {
    for (Split split : kAllSplits) {
      SCOPED_TRACE(std::string(c.name) + " " + splitName(split));
      Parsed p = parse(c.input, split);
      EXPECT_EQ(p.outcome, ResponseParser::Outcome::kError);
      EXPECT_EQ(p.error, c.error);
    }
  }
}

// The head is checked a word at a time: a byte is judged the same at every offset of a
// word, and in every split of the input.
TEST(ResponseParser, EveryByteOfTheHeadIsCheckedWhereverItLies) {
  const std::string prefix = "HTTP/1.1 200 OK\r\nX-Value: ";
  const std::string suffix = "\r\nContent-Length: 0\r\n\r\n";
  const struct {
    char byte;
    const char* error;  // null: allowed
  } bytes[] = {
      {'\0', "control character in the response head"},
      {'\x01', "control character in the response head"},
      {'\x1f', "control character in the response head"},
      {'\x7f', "control character in the response head"},
      {'\n', "bare LF in the response head"},
      {'\r', "bare CR in the response head"},
      {'\t', nullptr},
      {' ', nullptr},
      {'~', nullptr},
      {'\x80', nullptr},
      {'\xff', nullptr},
  };
  for (const auto& b : bytes) {
    for (size_t at = 0; at < 24; ++at) {
      std::string value(23, 'v');
      value.insert(at, 1, b.byte);
      for (Split split : kAllSplits) {
        SCOPED_TRACE("byte " + std::to_string(static_cast<unsigned char>(b.byte)) + " at " +
                     std::to_string(at) + " " + splitName(split));
        Parsed p = parse(prefix + value + suffix, split);
        if (b.error != nullptr) {
          EXPECT_EQ(p.outcome, ResponseParser::Outcome::kError);
          EXPECT_EQ(p.error, b.error);
        } else {
          ASSERT_EQ(p.outcome, ResponseParser::Outcome::kComplete) << p.error;
          ASSERT_EQ(p.headers.size(), 2u);
          // Field values are trimmed of the whitespace at their ends (RFC 9110 §5.5).
          std::string expected = value;
          bool blank = b.byte == ' ' || b.byte == '\t';
          if (blank && at == 0) expected.erase(0, 1);
          if (blank && at == 23) expected.pop_back();
          EXPECT_EQ(p.headers[0].second, expected);
        }
      }
    }
  }
}

TEST(ResponseParser, TooManyHeaders) {
  std::string input = "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 101; ++i) input += "X-" + std::to_string(i) + ": v\r\n";
  input += "\r\n";
  EXPECT_EQ(parse(input).error, "too many header fields");
}

TEST(ResponseParser, CutShortIsAnError) {
  EXPECT_EQ(
      parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", Split::kWhole, false, true).error,
      "the upstream closed the connection in the middle of a body");
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nContent-", Split::kWhole, false, true).error,
            "the upstream closed the connection before a complete head");
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", Split::kWhole,
                  false, true)
                .error,
            "the upstream closed the connection in the middle of a body");
}

TEST(ResponseParser, ErrorsAndCompletionAreSticky) {
  Parsed unused;
  Collector collector(unused);
  ResponseParser parser(collector);
  parser.reset(false);
  std::string bad = "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n";
  EXPECT_EQ(parser.dispatch(bad.data(), bad.size()).outcome, ResponseParser::Outcome::kError);
  EXPECT_EQ(parser.dispatch("HTTP/1.1 200 OK\r\n\r\n", 19).outcome,
            ResponseParser::Outcome::kError);
  parser.reset(false);
  std::string good = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  EXPECT_EQ(parser.dispatch(good.data(), good.size()).outcome, ResponseParser::Outcome::kComplete);
  ResponseParser::Result again = parser.dispatch(good.data(), good.size());
  EXPECT_EQ(again.outcome, ResponseParser::Outcome::kComplete);
  EXPECT_EQ(again.consumed, 0u);
}

}  // namespace
}  // namespace scalws::worker::proxy
