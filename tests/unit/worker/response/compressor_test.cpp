#include "worker/response/compress/compressor.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tests/unit/worker/response/decode.h"
#include "worker/response/compress/compressor_pool.h"

namespace scalws::worker::compress {
namespace {

using testing::compressibleText;

class CollectOutput final : public CompressedSink {
 public:
  void onCompressed(std::string_view bytes) noexcept override {
    ++calls;
    EXPECT_FALSE(bytes.empty());
    out.append(bytes);
  }
  std::string out;
  int calls = 0;
};

std::optional<std::string> decodeAs(CompressEncoding e, std::string_view data) {
  switch (e) {
    case CompressEncoding::kGzip:
      return testing::gunzip(data);
    case CompressEncoding::kBrotli:
      return testing::unbrotli(data);
    case CompressEncoding::kZstd:
      return testing::unzstd(data);
  }
  return std::nullopt;
}

class CompressorRoundTrip : public ::testing::TestWithParam<CompressEncoding> {};

TEST_P(CompressorRoundTrip, InOnePiece) {
  std::string text = compressibleText(100'000);
  auto c = Compressor::create(Compressor::paramsFor(GetParam(), 5, text.size()));
  ASSERT_NE(c, nullptr);
  CollectOutput sink;
  ASSERT_TRUE(c->write(text, true, sink));
  EXPECT_LT(sink.out.size(), text.size() / 4);
  EXPECT_EQ(decodeAs(GetParam(), sink.out), text);
}

TEST_P(CompressorRoundTrip, InPiecesThenAnEmptyEnd) {
  std::string text = compressibleText(300'000);
  auto c = Compressor::create(Compressor::paramsFor(GetParam(), 3, std::nullopt));
  ASSERT_NE(c, nullptr);
  CollectOutput sink;
  for (size_t at = 0; at < text.size(); at += 7'777) {
    ASSERT_TRUE(c->write(std::string_view(text).substr(at, 7'777), false, sink));
  }
  ASSERT_TRUE(c->write({}, true, sink));
  EXPECT_EQ(decodeAs(GetParam(), sink.out), text);
}

TEST_P(CompressorRoundTrip, OutputLeavesInBufferSizedPieces) {
  // Random bytes do not compress: the output is as large as the input, so it must leave
  // in several full buffers rather than grow one.
  std::string noise(200'000, '\0');
  uint32_t x = 12345;
  for (char& ch : noise) {
    x = x * 1103515245 + 12345;
    ch = static_cast<char>(x >> 24);
  }
  auto c = Compressor::create(Compressor::paramsFor(GetParam(), 1, noise.size()));
  ASSERT_NE(c, nullptr);
  CollectOutput sink;
  ASSERT_TRUE(c->write(noise, true, sink));
  EXPECT_GE(sink.calls, 10);
  EXPECT_EQ(decodeAs(GetParam(), sink.out), noise);
}

TEST_P(CompressorRoundTrip, EmptyBody) {
  auto c = Compressor::create(Compressor::paramsFor(GetParam(), 1, 0));
  ASSERT_NE(c, nullptr);
  CollectOutput sink;
  ASSERT_TRUE(c->write({}, true, sink));
  EXPECT_FALSE(sink.out.empty());  // a valid, empty stream
  EXPECT_EQ(decodeAs(GetParam(), sink.out), "");
}

TEST_P(CompressorRoundTrip, ResetStartsAFreshStreamOrRefuses) {
  auto c = Compressor::create(Compressor::paramsFor(GetParam(), 1, std::nullopt));
  ASSERT_NE(c, nullptr);
  CollectOutput first;
  ASSERT_TRUE(c->write("abandoned halfway ", false, first));  // never ended
  if (!c->reset()) {
    EXPECT_EQ(GetParam(), CompressEncoding::kBrotli);  // brotli 1.0 cannot
    return;
  }
  CollectOutput second;
  std::string text = compressibleText(5'000);
  ASSERT_TRUE(c->write(text, true, second));
  EXPECT_EQ(decodeAs(GetParam(), second.out), text);
}

std::string encodingTestName(const ::testing::TestParamInfo<CompressEncoding>& param) {
  switch (param.param) {
    case CompressEncoding::kGzip:
      return "gzip";
    case CompressEncoding::kBrotli:
      return "br";
    case CompressEncoding::kZstd:
      return "zstd";
  }
  return "unknown";
}

INSTANTIATE_TEST_SUITE_P(Encodings, CompressorRoundTrip,
                         ::testing::Values(CompressEncoding::kGzip, CompressEncoding::kBrotli,
                                           CompressEncoding::kZstd),
                         encodingTestName);

TEST(CompressorParams, WindowFitsTheResponseWithinBounds) {
  using E = CompressEncoding;
  EXPECT_EQ(Compressor::paramsFor(E::kGzip, 1, std::nullopt).window_log, 15);
  EXPECT_EQ(Compressor::paramsFor(E::kGzip, 1, 100).window_log, 9);
  EXPECT_EQ(Compressor::paramsFor(E::kGzip, 1, 2048).window_log, 11);
  EXPECT_EQ(Compressor::paramsFor(E::kGzip, 1, 2049).window_log, 12);
  EXPECT_EQ(Compressor::paramsFor(E::kGzip, 1, uint64_t{1} << 40).window_log, 15);
  EXPECT_EQ(Compressor::paramsFor(E::kBrotli, 4, std::nullopt).window_log, 19);
  EXPECT_EQ(Compressor::paramsFor(E::kBrotli, 4, 10).window_log, 10);
  EXPECT_EQ(Compressor::paramsFor(E::kZstd, 3, std::nullopt).window_log, 19);
  EXPECT_EQ(Compressor::paramsFor(E::kZstd, 3, 70'000).window_log, 17);
  EXPECT_EQ(Compressor::paramsFor(E::kZstd, 3, 1).window_log, 10);
}

TEST(CompressorPool, ReusesByParamsAndIsBounded) {
  CompressorPool pool;
  auto params = Compressor::paramsFor(CompressEncoding::kGzip, 1, std::nullopt);
  std::unique_ptr<Compressor> a = pool.take(params);
  ASSERT_NE(a, nullptr);
  Compressor* raw = a.get();
  pool.give(std::move(a));
  EXPECT_EQ(pool.idle(), 1u);
  // Other parameters do not take it.
  auto other = pool.take(Compressor::paramsFor(CompressEncoding::kGzip, 9, std::nullopt));
  EXPECT_NE(other.get(), raw);
  EXPECT_EQ(pool.idle(), 1u);
  auto again = pool.take(params);
  EXPECT_EQ(again.get(), raw);
  EXPECT_EQ(pool.idle(), 0u);
  // Brotli cannot be reset: never kept.
  pool.give(pool.take(Compressor::paramsFor(CompressEncoding::kBrotli, 1, std::nullopt)));
  EXPECT_EQ(pool.idle(), 0u);
  for (int level = 1; level <= 9; ++level) {
    pool.give(pool.take(Compressor::paramsFor(CompressEncoding::kGzip, level, 1000)));
    pool.give(pool.take(Compressor::paramsFor(CompressEncoding::kZstd, level, 1000)));
  }
  EXPECT_EQ(pool.idle(), CompressorPool::kMaxIdle);
}

}  // namespace
}  // namespace scalws::worker::compress
