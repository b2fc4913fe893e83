#include "worker/http1/request_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/chunk_feeder.h"

namespace scalws::worker::http1 {
namespace {

struct Seen {
  std::string method;
  std::string target;
  std::string raw_path;
  std::string query;
  std::string host;
  HttpVersion version = HttpVersion::kHttp11;
  std::vector<std::pair<std::string, std::string>> headers;
  bool keep_alive = false;
  bool chunked = false;
  bool expect_continue = false;
  std::string upgrade;
  uint64_t content_length = 0;
  std::string body;
  bool complete = false;
};

// Plays the connection: one contiguous buffer that only grows at the end (capacity
// reserved up front, so views stay valid), resume() after each complete message.
class Driver : public RequestCodecCallbacks {
 public:
  explicit Driver(CodecLimits limits = {}) : codec_(limits, *this, request_) {
    request_.arena = &arena_;
    buffer_.reserve(1 << 20);
  }

  bool onRequestHead(Request& r) override {
    Seen s;
    s.method = std::string(r.method_name);
    s.target = std::string(r.target);
    s.raw_path = std::string(r.raw_path);
    s.query = std::string(r.query);
    s.host = std::string(r.host);
    s.version = r.version;
    for (const auto& h : r.headers) s.headers.emplace_back(h.name, h.value);
    s.keep_alive = r.keep_alive;
    s.chunked = r.chunked;
    s.expect_continue = r.expect_continue;
    s.upgrade = std::string(r.upgrade);
    s.content_length = r.content_length;
    seen.push_back(s);
    codec_.setBodyLimit(body_limit);
    return true;
  }
  void onRequestBody(std::string_view data) override { seen.back().body += data; }
  void onRequestComplete() override { seen.back().complete = true; }

  // Feeds `input` split as asked; stops at the first error.
  void feed(const std::string& input, scalws::testing::Split split, uint32_t seed = 3) {
    for (size_t n : scalws::testing::chunkSizes(split, input.size(), seed)) {
      buffer_.append(input, fed_, n);
      fed_ += n;
      if (!pump()) return;
    }
  }

  bool pump() {
    while (parsed_ < buffer_.size()) {
      auto r = codec_.dispatch(buffer_.data() + parsed_, buffer_.size() - parsed_);
      parsed_ += r.consumed;
      if (r.outcome == RequestCodec::Outcome::kError) {
        error_status = r.error_status;
        error_reason = r.error_reason;
        return false;
      }
      if (r.outcome == RequestCodec::Outcome::kNeedMore) return true;
      if (r.outcome == RequestCodec::Outcome::kMessageComplete) codec_.resume();
    }
    return true;
  }

  std::vector<Seen> seen;
  uint16_t error_status = 0;
  std::string error_reason;
  uint64_t body_limit = UINT64_MAX;

 private:
  Arena arena_;
  Request request_;
  RequestCodec codec_;
  std::string buffer_;
  size_t fed_ = 0;
  size_t parsed_ = 0;
};

class RequestCodecTest : public ::testing::TestWithParam<scalws::testing::Split> {};

TEST_P(RequestCodecTest, SimpleGet) {
  Driver d;
  d.feed("GET /a/b?x=1&y HTTP/1.1\r\nHost: Example.COM:8080\r\nUser-Agent: t \r\n\r\n", GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  ASSERT_EQ(d.seen.size(), 1u);
  const Seen& s = d.seen[0];
  EXPECT_EQ(s.method, "GET");
  EXPECT_EQ(s.target, "/a/b?x=1&y");
  EXPECT_EQ(s.raw_path, "/a/b");
  EXPECT_EQ(s.query, "x=1&y");
  EXPECT_EQ(s.host, "example.com");
  EXPECT_TRUE(s.keep_alive);
  EXPECT_TRUE(s.complete);
  ASSERT_EQ(s.headers.size(), 2u);
  EXPECT_EQ(s.headers[1].first, "User-Agent");
  EXPECT_EQ(s.headers[1].second, "t");  // trailing OWS trimmed
}

TEST_P(RequestCodecTest, PipelinedRequestsInOrder) {
  std::string input;
  for (int i = 0; i < 100; ++i)
    input += "GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: a\r\n\r\n";
  Driver d;
  d.feed(input, GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  ASSERT_EQ(d.seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(d.seen[i].raw_path, "/" + std::to_string(i));
}

TEST_P(RequestCodecTest, ContentLengthBody) {
  Driver d;
  d.feed(
      "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello worldGET / HTTP/1.1\r\nHost: "
      "a\r\n\r\n",
      GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  ASSERT_EQ(d.seen.size(), 2u);
  EXPECT_EQ(d.seen[0].body, "hello world");
  EXPECT_EQ(d.seen[0].content_length, 11u);
  EXPECT_EQ(d.seen[1].method, "GET");
}

TEST_P(RequestCodecTest, ChunkedBodyWithExtensionAndTrailer) {
  Driver d;
  d.feed(
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
      GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  ASSERT_EQ(d.seen.size(), 1u);
  EXPECT_TRUE(d.seen[0].chunked);
  EXPECT_EQ(d.seen[0].body, "hello world");
  EXPECT_TRUE(d.seen[0].complete);
}

TEST_P(RequestCodecTest, PipelinedAfterChunkedBodiesWithTrailers) {
  std::string input;
  for (int i = 0; i < 5; ++i) {
    input += "POST /" + std::to_string(i) +
             " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
             "3;e=\"q\"\r\nabc\r\n0\r\nX-Sum: 1\r\n\r\nGET /g HTTP/1.1\r\nHost: a\r\n\r\n";
  }
  Driver d;
  d.feed(input, GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  ASSERT_EQ(d.seen.size(), 10u);
  for (int i = 0; i < 10; i += 2) {
    EXPECT_EQ(d.seen[i].body, "abc");
    EXPECT_TRUE(d.seen[i].complete);
    EXPECT_EQ(d.seen[i + 1].raw_path, "/g");
  }
}

TEST_P(RequestCodecTest, Http10KeepAliveRules) {
  Driver d;
  d.feed(
      "GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
      GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  ASSERT_EQ(d.seen.size(), 3u);
  EXPECT_FALSE(d.seen[0].keep_alive);
  EXPECT_EQ(d.seen[0].version, HttpVersion::kHttp10);
  EXPECT_TRUE(d.seen[1].keep_alive);
  EXPECT_FALSE(d.seen[2].keep_alive);
}

TEST_P(RequestCodecTest, AbsoluteFormTargetWinsOverHost) {
  Driver d;
  d.feed("GET http://Other.Example:81/x/y?q HTTP/1.1\r\nHost: other.example:81\r\n\r\n",
         GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  EXPECT_EQ(d.seen[0].host, "other.example");
  EXPECT_EQ(d.seen[0].raw_path, "/x/y");
  EXPECT_EQ(d.seen[0].query, "q");
}

// RFC 9112 §3.2.2 lets the target's authority win; a Host naming another host is refused
// instead, so no handler sees a host other than the one the route matched.
TEST_P(RequestCodecTest, AbsoluteFormWhoseAuthorityDiffersFromHostIs400) {
  Driver d;
  d.feed("GET http://victim.example/x HTTP/1.1\r\nHost: tenant.example\r\n\r\n", GetParam());
  EXPECT_EQ(d.error_status, 400);
  EXPECT_TRUE(d.seen.empty() || !d.seen[0].complete);
}

TEST_P(RequestCodecTest, AbsoluteFormWithoutHostInHttp10IsServed) {
  Driver d;
  d.feed("GET http://a.example/x HTTP/1.0\r\n\r\n", GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  EXPECT_EQ(d.seen[0].host, "a.example");
}

TEST_P(RequestCodecTest, ExpectContinue) {
  Driver d;
  d.feed("PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx",
         GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  EXPECT_TRUE(d.seen[0].expect_continue);
}

TEST_P(RequestCodecTest, UpgradeRequestsNameTheirProtocol) {
  Driver d;
  d.feed(
      "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\n"
      "Upgrade: websocket, h2c\r\n\r\n",
      GetParam());
  ASSERT_EQ(d.error_status, 0) << d.error_reason;
  ASSERT_EQ(d.seen.size(), 1u);
  EXPECT_EQ(d.seen[0].upgrade, "websocket");
  // RFC 9110 §7.8: Upgrade counts only when Connection names it; and a request with a
  // body cannot switch at its end.
  Driver no_connection;
  no_connection.feed("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n", GetParam());
  EXPECT_EQ(no_connection.seen.at(0).upgrade, "");
  Driver with_body;
  with_body.feed(
      "POST / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\n"
      "Content-Length: 1\r\n\r\nx",
      GetParam());
  EXPECT_EQ(with_body.seen.at(0).upgrade, "");
}

struct Malformed {
  const char* name;
  std::string input;
  uint16_t status;
};

TEST_P(RequestCodecTest, MalformedRequestsAreRefused) {
  const Malformed cases[] = {
      {"CL and TE",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: "
       "chunked\r\n\r\n0\r\n\r\n",
       400},
      {"differing CL",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
      {"duplicate CL",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400},
      {"negative CL", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400},
      {"CL with junk", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400},
      {"CL overflow",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400},
      {"chunked not last", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
       400},
      {"unknown coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
       501},
      {"coding without chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
       400},
      {"TE in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
      {"bad chunk size", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
       400},
      {"chunk ext too long",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;" +
           std::string(2000, 'x') + "\r\na\r\n0\r\n\r\n",
       400},
      {"bare LF in chunk line",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\na\r\n0\r\n\r\n", 400},
      {"bare CR in chunk line",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\ra\r\n0\r\n\r\n", 400},
      {"obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", 400},
      {"bare CR", "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400},
      {"bare LF", "GET / HTTP/1.1\nHost: a\n\n", 400},
      {"NUL in value", std::string("GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", 36), 400},
      {"control char in name", "GET / HTTP/1.1\r\nHost: a\r\nX\x01: b\r\n\r\n", 400},
      {"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400},
      {"missing host", "GET / HTTP/1.1\r\n\r\n", 400},
      {"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
      {"invalid host", "GET / HTTP/1.1\r\nHost: a b/c\r\n\r\n", 400},
      {"invalid method", "G@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"unknown method", "FOO / HTTP/1.1\r\nHost: a\r\n\r\n", 501},
      {"HTTP/2.0 line", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
      {"HTTP/0.9 line", "GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505},
      {"HTTP/1.3", "GET / HTTP/1.3\r\nHost: a\r\n\r\n", 400},
      {"HTTP/3.0", "GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505},
      {"garbled version", "GET / HTTP/x.1\r\nHost: a\r\n\r\n", 400},
      {"lower-case method", "get / HTTP/1.1\r\nHost: a\r\n\r\n", 501},
      {"relative target", "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"asterisk with GET", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 405},
      {"userinfo in absolute form", "GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"unsupported expect", "GET / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\n\r\n", 417},
      {"space in target", "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      // The request line with a URI's and a version's strictness.
      {"fragment in target", "GET /#x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"fragment after query", "GET /a?b#c HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"raw UTF-8 in target", "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"raw 0x80 in query", "GET /?q=\x80 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"version with leading zero", "GET / HTTP/01.1\r\nHost: a\r\n\r\n", 400},
      {"version 02.0", "GET / HTTP/02.0\r\nHost: a\r\n\r\n", 400},
      {"version two-digit minor", "GET / HTTP/1.10\r\nHost: a\r\n\r\n", 400},
      {"version 3 without minor", "GET / HTTP/3\r\nHost: a\r\n\r\n", 400},
      {"over-long method", std::string(33, 'X') + " / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"over-long method starting like GET",
       "GET" + std::string(4000, 'T') + " / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"unknown method of 32 bytes", std::string(32, 'X') + " / HTTP/1.1\r\nHost: a\r\n\r\n", 501},
      // Chunked framing after the head, checked like the head (llhttp 8.1.0 is lax there).
      {"chunked end with bare CR and a byte",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\rX"
       "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
       400},
      {"any two bytes as chunk CRLF",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n",
       400},
      {"obs-fold in trailer",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\r\n b\r\n\r\n",
       400},
      {"space before colon in trailer",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX : a\r\n\r\n", 400},
      {"bare CR in trailer",
       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\rb\r\n\r\n", 400},
  };
  for (const Malformed& c : cases) {
    Driver d;
    d.feed(c.input, GetParam());
    EXPECT_EQ(d.error_status, c.status)
        << c.name << " (" << scalws::testing::splitName(GetParam()) << "): " << d.error_reason;
    for (const Seen& s : d.seen) EXPECT_FALSE(s.complete) << c.name << ": a request got through";
  }
}

TEST_P(RequestCodecTest, LimitsGiveTheirStatus) {
  CodecLimits limits;
  limits.max_request_line = 64;
  limits.max_header_size = 256;
  limits.max_headers = 4;
  {
    Driver d(limits);
    d.feed("GET /" + std::string(100, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", GetParam());
    EXPECT_EQ(d.error_status, 414);
  }
  {
    Driver d(limits);
    d.feed("GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(300, 'b') + "\r\n\r\n", GetParam());
    EXPECT_EQ(d.error_status, 431);
  }
  {
    Driver d(limits);
    d.feed("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\n\r\n", GetParam());
    EXPECT_EQ(d.error_status, 431);
  }
  {
    Driver d;
    d.body_limit = 10;
    d.feed("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world", GetParam());
    EXPECT_EQ(d.error_status, 413);
  }
  {
    Driver d;
    d.body_limit = 10;
    d.feed(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello "
        "\r\n5\r\nworld\r\n0\r\n\r\n",
        GetParam());
    EXPECT_EQ(d.error_status, 413);
  }
}

INSTANTIATE_TEST_SUITE_P(Splits, RequestCodecTest, ::testing::ValuesIn(scalws::testing::kAllSplits),
                         [](const auto& param_info) {
                           switch (param_info.param) {
                             case scalws::testing::Split::kWhole:
                               return std::string("Whole");
                             case scalws::testing::Split::kByteByByte:
                               return std::string("ByteByByte");
                             case scalws::testing::Split::kRandom:
                               return std::string("Random");
                           }
                           return std::string("X");
                         });

TEST(RequestCodecRandomSeeds, ManySeedsSameResult) {
  std::string input;
  for (int i = 0; i < 20; ++i) {
    input += "POST /" + std::to_string(i) +
             " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  }
  for (uint32_t seed = 1; seed < 50; ++seed) {
    Driver d;
    d.feed(input, scalws::testing::Split::kRandom, seed);
    ASSERT_EQ(d.error_status, 0) << "seed " << seed << ": " << d.error_reason;
    ASSERT_EQ(d.seen.size(), 20u) << "seed " << seed;
    for (const Seen& s : d.seen) EXPECT_EQ(s.body, "abc");
  }
}

}  // namespace
}  // namespace scalws::worker::http1
