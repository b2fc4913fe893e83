#include "common/http_date.h"

#include <gtest/gtest.h>

namespace scalws::common {
namespace {

TEST(HttpDateTest, FormatsImfFixdate) {
  char out[29];
  formatHttpDate(784111777, out);
  EXPECT_EQ(std::string_view(out, 29), "Sun, 06 Nov 1994 08:49:37 GMT");
}

TEST(HttpDateTest, ParsesAllThreeForms) {
  EXPECT_EQ(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
  EXPECT_EQ(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
  EXPECT_EQ(parseHttpDate("Sun Nov  6 08:49:37 1994"), 784111777);
}

TEST(HttpDateTest, RefusesGarbage) {
  EXPECT_FALSE(parseHttpDate(""));
  EXPECT_FALSE(parseHttpDate("yesterday"));
  EXPECT_FALSE(parseHttpDate("Sun, 06 Foo 1994 08:49:37 GMT"));
  EXPECT_FALSE(parseHttpDate("Sun, 06 Nov 1994 25:49:37 GMT"));
  EXPECT_FALSE(parseHttpDate("Sun, 06 Nov 1994 08:49:37 UTC"));
}

TEST(HttpDateTest, CacheRendersAHeaderLine) {
  DateCache cache;
  std::string_view line = cache.headerLine();
  EXPECT_EQ(line.substr(0, 6), "Date: ");
  EXPECT_EQ(line.substr(line.size() - 5), "GMT\r\n");
  EXPECT_TRUE(parseHttpDate(cache.value()).has_value());
}

}  // namespace
}  // namespace scalws::common
