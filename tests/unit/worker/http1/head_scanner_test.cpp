#include "worker/http1/head_scanner.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/chunk_feeder.h"

namespace scalws::worker::http1 {
namespace {

using Verdict = HeadScanner::Verdict;

// Feeds `input` in the given split and returns the first final verdict and the absolute
// offset it was reached at.
std::pair<Verdict, size_t> scan(const std::string& input, scalws::testing::Split split) {
  HeadScanner s;
  size_t pos = 0;
  for (size_t n : scalws::testing::chunkSizes(split, input.size(), 7)) {
    HeadScanner::Result r = s.feed(input.data() + pos, n);
    if (r.verdict != Verdict::kNeedMore) return {r.verdict, pos + r.consumed};
    pos += n;
  }
  return {Verdict::kNeedMore, pos};
}

struct Case {
  const char* name;
  std::string input;
  Verdict verdict;
};

TEST(HeadScannerTest, VerdictsDoNotDependOnChunking) {
  const Case cases[] = {
      {"simple", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", Verdict::kHeadComplete},
      {"leading empty lines", "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", Verdict::kHeadComplete},
      {"incomplete", "GET / HTTP/1.1\r\nHost: a\r\n", Verdict::kNeedMore},
      {"bare LF", "GET / HTTP/1.1\nHost: a\r\n\r\n", Verdict::kBareLf},
      {"bare LF at end", "GET / HTTP/1.1\r\nHost: a\r\n\n", Verdict::kBareLf},
      {"bare CR in line", "GET / HTTP/1.1\rHost: a\r\n\r\n", Verdict::kBareCr},
      {"bare CR in value", "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", Verdict::kBareCr},
      {"NUL in value", std::string("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 27), Verdict::kControlChar},
      {"DEL in name", "GET / HTTP/1.1\r\nX\x7f: a\r\n\r\n", Verdict::kControlChar},
      {"tab allowed", "GET / HTTP/1.1\r\nX:\ta\r\n\r\n", Verdict::kHeadComplete},
      {"obs-fold space", "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", Verdict::kObsFold},
      {"obs-fold tab", "GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", Verdict::kObsFold},
      {"whitespace before first header", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", Verdict::kObsFold},
      {"obs-text allowed", "GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n", Verdict::kHeadComplete},
      // Long lines take the 16-bytes-at-a-time path; the bad byte sits past a block.
      {"long line with tab", "GET /" + std::string(40, 'a') + "\tb HTTP/1.1\r\n\r\n",
       Verdict::kHeadComplete},
      {"long value with control char",
       "GET / HTTP/1.1\r\nX: " + std::string(37, 'v') + "\x1f" + "w\r\n\r\n",
       Verdict::kControlChar},
      {"long value with DEL", "GET / HTTP/1.1\r\nX: " + std::string(33, 'v') + "\x7f\r\n\r\n",
       Verdict::kControlChar},
      {"long value with bare CR", "GET / HTTP/1.1\r\nX: " + std::string(50, 'v') + "\rw\r\n\r\n",
       Verdict::kBareCr},
      {"high bytes are plain", "GET / HTTP/1.1\r\nX: " + std::string(40, '\xff') + "\r\n\r\n",
       Verdict::kHeadComplete},
  };
  for (const Case& c : cases) {
    for (scalws::testing::Split split : scalws::testing::kAllSplits) {
      EXPECT_EQ(scan(c.input, split).first, c.verdict)
          << c.name << " (" << scalws::testing::splitName(split) << ")";
    }
  }
}

TEST(HeadScannerTest, StopsAtTheEndOfTheHead) {
  std::string input = "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n\r\nx\n\0";
  for (scalws::testing::Split split : scalws::testing::kAllSplits) {
    auto [verdict, offset] = scan(input, split);
    EXPECT_EQ(verdict, Verdict::kHeadComplete);
    EXPECT_EQ(offset, input.find("\r\n\r\n") + 4) << scalws::testing::splitName(split);
  }
}

TEST(HeadScannerTest, ResetStartsANewHead) {
  HeadScanner s;
  std::string a = "GET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(s.feed(a.data(), a.size()).verdict, Verdict::kHeadComplete);
  s.reset();
  std::string b = "\r\nGET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(s.feed(b.data(), b.size()).verdict, Verdict::kHeadComplete);
}

}  // namespace
}  // namespace scalws::worker::http1
