#include "worker/handlers/static/byte_range.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace scalws::worker {
namespace {

using Kind = RangeRequest::Kind;
using Pairs = std::vector<std::pair<uint64_t, uint64_t>>;  // first, last

Pairs pairsOf(const RangeRequest& r) {
  Pairs out;
  for (size_t i = 0; i < r.count; ++i) out.emplace_back(r.ranges[i].first, r.ranges[i].last());
  return out;
}

TEST(ByteRange, SingleRanges) {
  RangeRequest r = parseRange("bytes=0-99", 1000);
  ASSERT_EQ(r.kind, Kind::kRanges);
  EXPECT_EQ(pairsOf(r), (Pairs{{0, 99}}));
  EXPECT_EQ(r.ranges[0].length, 100u);
  EXPECT_EQ(pairsOf(parseRange("bytes=500-", 1000)), (Pairs{{500, 999}}));      // open
  EXPECT_EQ(pairsOf(parseRange("bytes=-100", 1000)), (Pairs{{900, 999}}));      // suffix
  EXPECT_EQ(pairsOf(parseRange("bytes=-5000", 1000)), (Pairs{{0, 999}}));       // longer suffix
  EXPECT_EQ(pairsOf(parseRange("bytes=990-5000", 1000)), (Pairs{{990, 999}}));  // clamped
  EXPECT_EQ(pairsOf(parseRange("bytes=999-999", 1000)), (Pairs{{999, 999}}));
  EXPECT_EQ(pairsOf(parseRange("BYTES=1-2", 1000)), (Pairs{{1, 2}}));
  EXPECT_EQ(pairsOf(parseRange("  bytes=1-2  ", 1000)), (Pairs{{1, 2}}));
  EXPECT_EQ(pairsOf(parseRange("bytes=0-99999999999999999999999", 10)), (Pairs{{0, 9}}));
}

TEST(ByteRange, Unsatisfiable) {
  EXPECT_EQ(parseRange("bytes=1000-", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(parseRange("bytes=1000-2000", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(parseRange("bytes=-0", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(parseRange("bytes=5000-6000, 7000-", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(parseRange("bytes=99999999999999999999999-", 1000).kind, Kind::kUnsatisfiable);
}

TEST(ByteRange, IgnoredHeadersServeTheWholeFile) {
  const char* ignored[] = {
      "items=0-1",   "bytes 0-1",  "bytes=",  "bytes=abc",   "bytes=1-0",
      "bytes=0-1,x", "bytes=--1",  "bytes=1", "bytes=0x1-2", "bytes = 0-1",
      "bytes=-1-2",  "bytes=+1-2", "",
  };
  for (const char* h : ignored) EXPECT_EQ(parseRange(h, 1000).kind, Kind::kWhole) << h;
  // An empty file has no byte range.
  EXPECT_EQ(parseRange("bytes=0-0", 0).kind, Kind::kWhole);
  EXPECT_EQ(parseRange("bytes=-1", 0).kind, Kind::kWhole);
}

TEST(ByteRange, SeveralRangesInTheOrderAsked) {
  RangeRequest r = parseRange("bytes=500-599, 0-9,-10", 1000);
  ASSERT_EQ(r.kind, Kind::kRanges);
  EXPECT_EQ(pairsOf(r), (Pairs{{500, 599}, {0, 9}, {990, 999}}));
  // Unsatisfiable members are dropped, the rest served.
  EXPECT_EQ(pairsOf(parseRange("bytes=0-1,5000-6000,4-5", 1000)), (Pairs{{0, 1}, {4, 5}}));
  // Empty list elements are allowed.
  EXPECT_EQ(pairsOf(parseRange("bytes=0-1,,4-5,", 1000)), (Pairs{{0, 1}, {4, 5}}));
  // Overlap is served as asked while the total stays within the file.
  EXPECT_EQ(pairsOf(parseRange("bytes=0-10,5-15", 1000)), (Pairs{{0, 10}, {5, 15}}));
}

TEST(ByteRange, PolicyBoundsCountAndAmplification) {
  std::string sixteen = "bytes=0-0";
  for (int i = 1; i < 16; ++i) sixteen += "," + std::to_string(i * 2) + "-" + std::to_string(i * 2);
  EXPECT_EQ(parseRange(sixteen, 1000).count, 16u);
  EXPECT_EQ(parseRange(sixteen + ",100-100", 1000).kind, Kind::kWhole);  // 17 ranges
  // Overlapping ranges adding up to more than the file: the whole file instead.
  EXPECT_EQ(parseRange("bytes=0-999,0-999", 1000).kind, Kind::kWhole);
  EXPECT_EQ(parseRange("bytes=0-,-1000,500-", 1000).kind, Kind::kWhole);
  EXPECT_EQ(parseRange("bytes=0-499,500-999", 1000).kind, Kind::kRanges);  // exactly all
}

}  // namespace
}  // namespace scalws::worker
