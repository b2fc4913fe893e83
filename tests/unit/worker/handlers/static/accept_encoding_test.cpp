#include "worker/handlers/static/accept_encoding.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker {
namespace {

using C = ContentCoding;
constexpr C kBoth[] = {C::kBrotli, C::kGzip};
constexpr C kGzipFirst[] = {C::kGzip, C::kBrotli};

std::vector<C> order(std::string_view header, std::span<const C> configured = kBoth) {
  CodingPreference p = preferredCodings(header, configured);
  return std::vector<C>(p.order.begin(), p.order.begin() + static_cast<long>(p.count));
}

TEST(AcceptEncoding, ConfiguredOrderBreaksTies) {
  EXPECT_EQ(order("gzip, deflate, br"), (std::vector<C>{C::kBrotli, C::kGzip}));
  EXPECT_EQ(order("gzip, deflate, br", kGzipFirst), (std::vector<C>{C::kGzip, C::kBrotli}));
  EXPECT_EQ(order("gzip"), (std::vector<C>{C::kGzip}));
  EXPECT_EQ(order("br"), (std::vector<C>{C::kBrotli}));
  EXPECT_EQ(order("BR, GZIP"), (std::vector<C>{C::kBrotli, C::kGzip}));
  EXPECT_EQ(order("x-gzip"), (std::vector<C>{C::kGzip}));
  constexpr C kGzipOnly[] = {C::kGzip};
  EXPECT_EQ(order("br, gzip", kGzipOnly), (std::vector<C>{C::kGzip}));
}

TEST(AcceptEncoding, QValues) {
  EXPECT_EQ(order("br;q=0.5, gzip;q=0.8"), (std::vector<C>{C::kGzip, C::kBrotli}));
  EXPECT_EQ(order("br;q=1.0, gzip;q=0.999"), (std::vector<C>{C::kBrotli, C::kGzip}));
  EXPECT_EQ(order("br;q=0, gzip"), (std::vector<C>{C::kGzip}));
  EXPECT_EQ(order("br;q=0.000, gzip;q=0.001"), (std::vector<C>{C::kGzip}));
  EXPECT_EQ(order("gzip ; q=0.5 , br ; Q=0.4"), (std::vector<C>{C::kGzip, C::kBrotli}));
  EXPECT_EQ(order("br;level=5;q=0.2, gzip;q=0.3"), (std::vector<C>{C::kGzip, C::kBrotli}));
  // Malformed q values make the element unacceptable.
  EXPECT_EQ(order("br;q=2, gzip;q=1.5"), (std::vector<C>{}));
  EXPECT_EQ(order("br;q=0.5x, gzip;q=.5"), (std::vector<C>{}));
  EXPECT_EQ(order("br;q=0.12345"), (std::vector<C>{}));
}

TEST(AcceptEncoding, WildcardAndIdentity) {
  EXPECT_EQ(order("*"), (std::vector<C>{C::kBrotli, C::kGzip}));
  EXPECT_EQ(order("*;q=0"), (std::vector<C>{}));
  EXPECT_EQ(order("gzip;q=0, *"), (std::vector<C>{C::kBrotli}));
  EXPECT_EQ(order("*;q=0.5, gzip"), (std::vector<C>{C::kGzip, C::kBrotli}));
  EXPECT_EQ(order("identity"), (std::vector<C>{}));
  EXPECT_EQ(order(""), (std::vector<C>{}));
  EXPECT_EQ(order("deflate, compress"), (std::vector<C>{}));
}

TEST(AcceptEncoding, EveryHeaderLineCounts) {
  std::vector<HeaderField> headers = {{"Accept-Encoding", "gzip;q=0.5"}, {"accept-encoding", "br"}};
  Request r;
  r.headers = headers;
  CodingPreference p = preferredCodings(r, kBoth);
  ASSERT_EQ(p.count, 2u);
  EXPECT_EQ(p.order[0], C::kBrotli);
  Request none;
  EXPECT_EQ(preferredCodings(none, kBoth).count, 0u);
}

}  // namespace
}  // namespace scalws::worker
