#include "worker/response/compress/compress_rules.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker::compress {
namespace {

using common::config::CompressConfig;

class CompressRulesTest : public ::testing::Test {
 protected:
  CompressRules::Decision decide(uint16_t status, std::vector<HeaderField> fields,
                                 std::optional<uint64_t> length = std::nullopt,
                                 std::string_view accept = "gzip, br") {
    accept_ = HeaderField{"accept-encoding", accept};
    request_.headers = std::span<const HeaderField>(&accept_, accept.empty() ? 0 : 1);
    return rules_.decide(request_, status, fields, length);
  }

  CompressConfig config_;
  CompressRules rules_{config_};
  Request request_;
  HeaderField accept_;
};

const HeaderField kHtml{"Content-Type", "text/html; charset=utf-8"};

TEST_F(CompressRulesTest, CompressesAListedTypeTheClientAccepts) {
  auto d = decide(200, {kHtml});
  EXPECT_TRUE(d.varies);
  ASSERT_TRUE(d.encoding.has_value());
  EXPECT_EQ(*d.encoding, CompressEncoding::kBrotli);
}

TEST_F(CompressRulesTest, VariesEvenWhenTheClientAcceptsNothing) {
  auto d = decide(200, {kHtml}, std::nullopt, "");
  EXPECT_TRUE(d.varies);
  EXPECT_FALSE(d.encoding.has_value());
}

TEST_F(CompressRulesTest, TypesNotListedOrMissingPass) {
  EXPECT_FALSE(decide(200, {{"content-type", "image/png"}}).varies);
  EXPECT_FALSE(decide(200, {}).varies);
  EXPECT_FALSE(decide(200, {{"content-type", "garbage"}}).varies);
  EXPECT_TRUE(decide(200, {{"CONTENT-TYPE", "Application/JSON"}}).varies);
}

TEST_F(CompressRulesTest, WildcardTypes) {
  config_.types = {"text/*"};
  CompressRules rules(config_);
  Request r;
  const HeaderField plain[] = {{"content-type", "text/x-anything"}};
  const HeaderField json[] = {{"content-type", "application/json"}};
  EXPECT_TRUE(rules.decide(r, 200, plain, std::nullopt).varies);
  EXPECT_FALSE(rules.decide(r, 200, json, std::nullopt).varies);
  EXPECT_TRUE(rules.typeMatches("TEXT/html"));
  EXPECT_FALSE(rules.typeMatches("textual/html"));
}

TEST_F(CompressRulesTest, SmallerThanMinSizePasses) {
  EXPECT_FALSE(decide(200, {kHtml}, 1023).varies);
  EXPECT_TRUE(decide(200, {kHtml}, 1024).varies);
  EXPECT_TRUE(decide(200, {kHtml}, std::nullopt).varies);  // streamed: unknown
}

TEST_F(CompressRulesTest, AlreadyEncodedRangesAndNoTransformPass) {
  EXPECT_FALSE(decide(200, {kHtml, {"Content-Encoding", "gzip"}}).varies);
  EXPECT_FALSE(decide(200, {kHtml, {"content-range", "bytes 0-1/10"}}).varies);
  EXPECT_FALSE(decide(200, {kHtml, {"cache-control", "public, no-transform"}}).varies);
  EXPECT_TRUE(decide(200, {kHtml, {"cache-control", "no-cache"}}).varies);
}

TEST_F(CompressRulesTest, Statuses) {
  for (uint16_t s : {200, 201, 203, 301, 404, 500, 503}) {
    EXPECT_TRUE(decide(s, {kHtml}).encoding.has_value()) << s;
  }
  for (uint16_t s : {101, 204, 205, 206}) EXPECT_FALSE(decide(s, {kHtml}).varies) << s;
}

TEST_F(CompressRulesTest, NotModifiedCarriesWhatThe200Would) {
  auto d = decide(304, {{"etag", "\"x\""}});
  EXPECT_TRUE(d.varies);
  EXPECT_TRUE(d.encoding.has_value());
  EXPECT_FALSE(decide(304, {}, std::nullopt, "").encoding.has_value());
}

TEST_F(CompressRulesTest, Levels) {
  config_.gzip_level = 2;
  config_.brotli_level = 7;
  config_.zstd_level = 12;
  CompressRules rules(config_);
  EXPECT_EQ(rules.level(CompressEncoding::kGzip), 2);
  EXPECT_EQ(rules.level(CompressEncoding::kBrotli), 7);
  EXPECT_EQ(rules.level(CompressEncoding::kZstd), 12);
}

}  // namespace
}  // namespace scalws::worker::compress
