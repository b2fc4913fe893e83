#include "worker/http/weighted_tokens.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace scalws::worker {
namespace {

std::vector<std::pair<std::string, int>> read(std::string_view list) {
  std::vector<std::pair<std::string, int>> out;
  WeightedTokens tokens(list);
  std::string_view token;
  int q = -7;
  while (tokens.next(token, q)) out.emplace_back(std::string(token), q);
  return out;
}

using Read = std::vector<std::pair<std::string, int>>;

TEST(WeightedTokens, TokensInOrderWithTheirWeights) {
  EXPECT_EQ(read("br;q=1, gzip;q=0.5, *;q=0"), (Read{{"br", 1000}, {"gzip", 500}, {"*", 0}}));
  EXPECT_EQ(read("gzip"), (Read{{"gzip", 1000}}));
  EXPECT_EQ(read(" zstd ; Q=0.125 ;level=1 ,identity"), (Read{{"zstd", 125}, {"identity", 1000}}));
  EXPECT_EQ(read("gzip ;  q=0.8"), (Read{{"gzip", 800}}));  // OWS around the ";"
  EXPECT_EQ(read("gzip;q=1.000,br;q=0.00"), (Read{{"gzip", 1000}, {"br", 0}}));
}

TEST(WeightedTokens, EmptyElementsAreSkipped) {
  EXPECT_EQ(read(""), Read{});
  EXPECT_EQ(read(" , ,gzip,, ;q=0.5,"), (Read{{"gzip", 1000}}));
}

TEST(WeightedTokens, AMalformedWeightIsZero) {
  for (const char* bad : {"gzip;q=2", "gzip;q=1.5", "gzip;q=0.1234", "gzip;q=", "gzip;q=.5",
                          "gzip;q=0,5", "gzip;q=x"}) {
    Read got = read(bad);
    ASSERT_FALSE(got.empty()) << bad;
    EXPECT_EQ(got[0], (std::pair<std::string, int>{"gzip", 0})) << bad;
  }
}

}  // namespace
}  // namespace scalws::worker
