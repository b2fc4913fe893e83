#include "worker/http1/chunked_body_scanner.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/chunk_feeder.h"

namespace scalws::worker::http1 {
namespace {

using ChunkedVerdict = ChunkedBodyScanner::Verdict;

// Feeds `input` in the given split; returns the first final verdict and the absolute
// offset it was reached at (the end of the body for kComplete).
std::pair<ChunkedVerdict, size_t> scanChunked(const std::string& input,
                                              scalws::testing::Split split, uint32_t seed = 5) {
  ChunkedBodyScanner s;
  size_t pos = 0;
  for (size_t n : scalws::testing::chunkSizes(split, input.size(), seed)) {
    ChunkedBodyScanner::Result r = s.feed(input.data() + pos, n);
    if (r.verdict != ChunkedVerdict::kNeedMore) return {r.verdict, pos + r.consumed};
    pos += n;
  }
  return {ChunkedVerdict::kNeedMore, pos};
}

struct ChunkedCase {
  const char* name;
  std::string input;
  ChunkedVerdict verdict;
  size_t end = 0;  // kComplete: where the body ends
};

class ChunkedBodyScannerTest : public ::testing::TestWithParam<scalws::testing::Split> {};

TEST_P(ChunkedBodyScannerTest, VerdictsDoNotDependOnChunking) {
  const std::string next = "GET / HTTP/1.1\r\n\r\n";
  const ChunkedCase cases[] = {
      {"empty body", "0\r\n\r\n" + next, ChunkedVerdict::kComplete, 5},
      {"two chunks", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n" + next, ChunkedVerdict::kComplete,
       26},
      {"upper-case hex", "A\r\n0123456789\r\n0\r\n\r\n", ChunkedVerdict::kComplete, 20},
      {"extension", "5;name=value\r\nhello\r\n0;x\r\n\r\n", ChunkedVerdict::kComplete, 28},
      {"BWS before extension", "5 ;a=\"q s\"\r\nhello\r\n0\r\n\r\n", ChunkedVerdict::kComplete, 24},
      {"trailers", "1\r\na\r\n0\r\nX-T: 1\r\nY:\tz \r\n\r\n" + next, ChunkedVerdict::kComplete, 26},
      {"obs-text in trailer", "0\r\nX: caf\xc3\xa9\r\n\r\n", ChunkedVerdict::kComplete, 15},
      {"data holding CRLFs", "4\r\n\r\n\r\n\r\n0\r\n\r\n", ChunkedVerdict::kComplete, 14},
      {"incomplete", "5\r\nhel", ChunkedVerdict::kNeedMore},
      {"no final CRLF yet", "0\r\n", ChunkedVerdict::kNeedMore},
      // The request smuggling shapes llhttp 8.1.0 lets through.
      {"bare CR then byte ends body", "0\r\n\rX" + next, ChunkedVerdict::kError},
      {"any two bytes after data", "5\r\nhelloXY0\r\n\r\n", ChunkedVerdict::kError},
      {"CR then other byte after data", "5\r\nhello\rX0\r\n\r\n", ChunkedVerdict::kError},
      {"LF only after data", "5\r\nhello\n0\r\n\r\n", ChunkedVerdict::kError},
      {"data longer than size", "5\r\nhelloEXTRA\r\n0\r\n\r\n", ChunkedVerdict::kError},
      {"obs-fold in trailer", "0\r\nX: a\r\n b\r\n\r\n", ChunkedVerdict::kError},
      {"whitespace-led trailer", "0\r\n X: a\r\n\r\n", ChunkedVerdict::kError},
      {"space before colon", "0\r\nX : a\r\n\r\n", ChunkedVerdict::kError},
      {"trailer without colon", "0\r\nX a\r\n\r\n", ChunkedVerdict::kError},
      {"bare LF in trailer", "0\r\nX: a\n\r\n", ChunkedVerdict::kError},
      {"bare CR in trailer", "0\r\nX: a\rb\r\n\r\n", ChunkedVerdict::kError},
      {"NUL in trailer", std::string("0\r\nX: a\0b\r\n\r\n", 13), ChunkedVerdict::kError},
      {"bare LF ends body", "0\r\n\n", ChunkedVerdict::kError},
      {"bare LF after size", "5\nhello\r\n0\r\n\r\n", ChunkedVerdict::kError},
      {"bare CR after size", "5\rhello\r\n0\r\n\r\n", ChunkedVerdict::kError},
      {"empty size", "\r\nhello\r\n0\r\n\r\n", ChunkedVerdict::kError},
      {"not hex", "zz\r\nhello\r\n0\r\n\r\n", ChunkedVerdict::kError},
      {"negative", "-5\r\nhello\r\n0\r\n\r\n", ChunkedVerdict::kError},
      {"17 digits", "1" + std::string(16, '0') + "\r\n", ChunkedVerdict::kError},
      {"control in extension", "5;a\x01\r\nhello\r\n0\r\n\r\n", ChunkedVerdict::kError},
      {"LF in extension", "5;a\nb\r\nhello\r\n0\r\n\r\n", ChunkedVerdict::kError},
  };
  for (const ChunkedCase& c : cases) {
    auto [verdict, at] = scanChunked(c.input, GetParam());
    EXPECT_EQ(verdict, c.verdict) << c.name << " (" << scalws::testing::splitName(GetParam())
                                  << ")";
    if (c.verdict == ChunkedVerdict::kComplete) {
      EXPECT_EQ(at, c.end) << c.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Splits, ChunkedBodyScannerTest,
                         ::testing::ValuesIn(scalws::testing::kAllSplits));

TEST(ChunkedBodyScannerSeeds, LargeChunksAcrossManyPieces) {
  std::string body;
  for (int i = 0; i < 10; ++i) body += "1000\r\n" + std::string(0x1000, 'a' + i) + "\r\n";
  body += "0\r\nX: y\r\n\r\n";
  for (uint32_t seed = 1; seed < 30; ++seed) {
    auto [verdict, at] = scanChunked(body + "GET", scalws::testing::Split::kRandom, seed);
    ASSERT_EQ(verdict, ChunkedVerdict::kComplete) << "seed " << seed;
    EXPECT_EQ(at, body.size()) << "seed " << seed;
  }
}

TEST(ChunkedBodyScannerReset, StartsOver) {
  ChunkedBodyScanner s;
  EXPECT_EQ(s.feed("5\r\nhe", 6).verdict, ChunkedVerdict::kNeedMore);
  s.reset();
  EXPECT_EQ(s.feed("0\r\n\r\n", 5).verdict, ChunkedVerdict::kComplete);
}

}  // namespace
}  // namespace scalws::worker::http1
