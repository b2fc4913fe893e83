#include "worker/handlers/static/conditional_request.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker {
namespace {

constexpr std::string_view kTag = "\"a1-400-17\"";
constexpr time_t kModified = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT
constexpr std::string_view kModifiedText = "Sun, 06 Nov 1994 08:49:37 GMT";
constexpr std::string_view kEarlier = "Sun, 06 Nov 1994 08:49:36 GMT";
constexpr std::string_view kLater = "Sun, 06 Nov 1994 08:49:38 GMT";

Precondition evaluate(std::vector<HeaderField> headers) {
  Request r;
  r.headers = headers;
  return evaluatePreconditions(r, Validators{kTag, kModified});
}

TEST(EntityTagList, StrongAndWeakComparison) {
  EXPECT_TRUE(entityTagListMatches("\"a1-400-17\"", kTag, false));
  EXPECT_TRUE(entityTagListMatches("\"x\", \"a1-400-17\"", kTag, false));
  EXPECT_TRUE(entityTagListMatches("\"x\",\"a1-400-17\"", kTag, false));
  EXPECT_FALSE(entityTagListMatches("W/\"a1-400-17\"", kTag, false));  // strong: W/ never
  EXPECT_TRUE(entityTagListMatches("W/\"a1-400-17\"", kTag, true));    // weak: W/ ignored
  EXPECT_FALSE(entityTagListMatches("\"a1-400-1\"", kTag, true));
  EXPECT_FALSE(entityTagListMatches("a1-400-17", kTag, true));               // unquoted: malformed
  EXPECT_TRUE(entityTagListMatches("\"a,b\", \"a1-400-17\"", kTag, false));  // ',' in a tag
  EXPECT_FALSE(entityTagListMatches("\"unterminated, \"a1-400-17\"", kTag, true));
  EXPECT_FALSE(entityTagListMatches("", kTag, true));
}

TEST(Preconditions, NoneGiven) {
  EXPECT_EQ(evaluate({}), Precondition::kProceed);
}

TEST(Preconditions, IfNoneMatch) {
  EXPECT_EQ(evaluate({{"If-None-Match", kTag}}), Precondition::kNotModified);
  EXPECT_EQ(evaluate({{"If-None-Match", "W/\"a1-400-17\""}}), Precondition::kNotModified);
  EXPECT_EQ(evaluate({{"If-None-Match", "*"}}), Precondition::kNotModified);
  EXPECT_EQ(evaluate({{"If-None-Match", "\"other\""}}), Precondition::kProceed);
  // A list over two lines.
  EXPECT_EQ(evaluate({{"If-None-Match", "\"other\""}, {"if-none-match", kTag}}),
            Precondition::kNotModified);
}

TEST(Preconditions, IfModifiedSince) {
  EXPECT_EQ(evaluate({{"If-Modified-Since", kModifiedText}}), Precondition::kNotModified);
  EXPECT_EQ(evaluate({{"If-Modified-Since", kLater}}), Precondition::kNotModified);
  EXPECT_EQ(evaluate({{"If-Modified-Since", kEarlier}}), Precondition::kProceed);
  EXPECT_EQ(evaluate({{"If-Modified-Since", "yesterday"}}), Precondition::kProceed);
  EXPECT_EQ(evaluate({{"If-Modified-Since", "Sunday, 06-Nov-94 08:49:37 GMT"}}),
            Precondition::kNotModified);
  EXPECT_EQ(evaluate({{"If-Modified-Since", "Sun Nov  6 08:49:37 1994"}}),
            Precondition::kNotModified);
}

TEST(Preconditions, IfNoneMatchWinsOverIfModifiedSince) {
  // RFC 9110 §13.1.3: If-Modified-Since is ignored when If-None-Match is present.
  EXPECT_EQ(evaluate({{"If-None-Match", "\"other\""}, {"If-Modified-Since", kLater}}),
            Precondition::kProceed);
  EXPECT_EQ(evaluate({{"If-None-Match", kTag}, {"If-Modified-Since", kEarlier}}),
            Precondition::kNotModified);
}

TEST(Preconditions, IfMatchAndIfUnmodifiedSince) {
  EXPECT_EQ(evaluate({{"If-Match", kTag}}), Precondition::kProceed);
  EXPECT_EQ(evaluate({{"If-Match", "*"}}), Precondition::kProceed);
  EXPECT_EQ(evaluate({{"If-Match", "\"other\""}}), Precondition::kFailed);
  EXPECT_EQ(evaluate({{"If-Match", "W/\"a1-400-17\""}}), Precondition::kFailed);  // strong
  EXPECT_EQ(evaluate({{"If-Unmodified-Since", kModifiedText}}), Precondition::kProceed);
  EXPECT_EQ(evaluate({{"If-Unmodified-Since", kLater}}), Precondition::kProceed);
  EXPECT_EQ(evaluate({{"If-Unmodified-Since", kEarlier}}), Precondition::kFailed);
  EXPECT_EQ(evaluate({{"If-Unmodified-Since", "garbage"}}), Precondition::kProceed);
  // If-Unmodified-Since is ignored when If-Match is present.
  EXPECT_EQ(evaluate({{"If-Match", kTag}, {"If-Unmodified-Since", kEarlier}}),
            Precondition::kProceed);
  // If-Match is evaluated before If-None-Match.
  EXPECT_EQ(evaluate({{"If-Match", "\"other\""}, {"If-None-Match", kTag}}), Precondition::kFailed);
  EXPECT_EQ(evaluate({{"If-Match", kTag}, {"If-None-Match", kTag}}), Precondition::kNotModified);
}

TEST(IfRange, EtagOrDate) {
  Validators v{kTag, kModified};
  EXPECT_TRUE(ifRangeHolds("", v));
  EXPECT_TRUE(ifRangeHolds(kTag, v));
  EXPECT_FALSE(ifRangeHolds("\"other\"", v));
  EXPECT_FALSE(ifRangeHolds("W/\"a1-400-17\"", v));  // weak tags never satisfy If-Range
  EXPECT_TRUE(ifRangeHolds(kModifiedText, v));
  EXPECT_FALSE(ifRangeHolds(kLater, v));  // a date must match exactly
  EXPECT_FALSE(ifRangeHolds(kEarlier, v));
  EXPECT_FALSE(ifRangeHolds("not a date", v));
}

}  // namespace
}  // namespace scalws::worker
