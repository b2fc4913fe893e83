#include "worker/response/compress/coding_choice.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker::compress {
namespace {

const std::vector<CompressEncoding> kAllEncodings = {
    CompressEncoding::kBrotli, CompressEncoding::kZstd, CompressEncoding::kGzip};

std::string chosenName(std::vector<std::string_view> lines,
                       const std::vector<CompressEncoding>& configured = kAllEncodings) {
  auto e = chooseEncoding(std::span<const std::string_view>(lines), configured);
  return e ? std::string(encodingName(*e)) : "identity";
}

TEST(CodingChoice, ServerOrderAmongEqualQ) {
  EXPECT_EQ(chosenName({"gzip, deflate, br, zstd"}), "br");
  EXPECT_EQ(chosenName({"gzip, zstd"}), "zstd");
  EXPECT_EQ(chosenName({"gzip"}), "gzip");
  EXPECT_EQ(chosenName({"x-gzip"}), "gzip");
  EXPECT_EQ(chosenName({"GZIP"}), "gzip");
  EXPECT_EQ(chosenName({"gzip, br"}, {CompressEncoding::kGzip, CompressEncoding::kBrotli}), "gzip");
}

TEST(CodingChoice, HigherQWins) {
  EXPECT_EQ(chosenName({"br;q=0.5, gzip"}), "gzip");
  EXPECT_EQ(chosenName({"br;q=0.5, gzip;q=0.4"}), "br");
  EXPECT_EQ(chosenName({"zstd;q=1.0, br;q=0.999"}), "zstd");
  EXPECT_EQ(chosenName({"br ; q=0.9 , gzip ; Q=0.8"}), "br");
}

TEST(CodingChoice, ZeroQExcludes) {
  EXPECT_EQ(chosenName({"br;q=0, gzip;q=0"}), "identity");
  EXPECT_EQ(chosenName({"br;q=0, gzip"}), "gzip");
  EXPECT_EQ(chosenName({"*;q=0"}), "identity");
  EXPECT_EQ(chosenName({"*, br;q=0"}), "zstd");  // named excludes itself from the star
}

TEST(CodingChoice, Star) {
  EXPECT_EQ(chosenName({"*"}), "br");
  EXPECT_EQ(chosenName({"*;q=0.5, gzip"}), "gzip");
}

TEST(CodingChoice, NoHeaderOrEmptyIsIdentity) {
  EXPECT_EQ(chosenName({}), "identity");
  EXPECT_EQ(chosenName({""}), "identity");
  EXPECT_EQ(chosenName({"identity"}), "identity");
  EXPECT_EQ(chosenName({"deflate, compress"}), "identity");
}

TEST(CodingChoice, IdentityPreferredOverWeakerEncodings) {
  EXPECT_EQ(chosenName({"identity, gzip;q=0.5"}), "identity");
  EXPECT_EQ(chosenName({"identity;q=0.5, gzip"}), "gzip");
  // identity;q=0 with nothing acceptable still gets identity: a 406 would help nobody.
  EXPECT_EQ(chosenName({"identity;q=0, deflate"}), "identity");
  EXPECT_EQ(chosenName({"identity;q=0, gzip"}), "gzip");
}

TEST(CodingChoice, MalformedQIsUnacceptable) {
  EXPECT_EQ(chosenName({"br;q=2, gzip"}), "gzip");
  EXPECT_EQ(chosenName({"br;q=0.1234, gzip;q=0.1"}), "gzip");
  EXPECT_EQ(chosenName({"br;q=x"}), "identity");
  EXPECT_EQ(chosenName({"br;q=1.5"}), "identity");
}

TEST(CodingChoice, SeveralLinesCombine) {
  EXPECT_EQ(chosenName({"gzip;q=0.5", "br;q=0.8"}), "br");
  EXPECT_EQ(chosenName({"gzip", "gzip;q=0"}), "gzip");  // the first mention counts
}

TEST(CodingChoice, FromTheRequest) {
  Request r;
  const HeaderField fields[] = {{"Accept-Encoding", "gzip;q=0.1"}, {"accept-encoding", "zstd"}};
  r.headers = fields;
  auto e = chooseEncoding(r, kAllEncodings);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, CompressEncoding::kZstd);
  Request none;
  EXPECT_FALSE(chooseEncoding(none, kAllEncodings).has_value());
}

}  // namespace
}  // namespace scalws::worker::compress
