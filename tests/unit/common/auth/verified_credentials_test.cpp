// VerifiedCredentials: what passed is remembered for its time and its scope only, and the
// memory stays within its capacity.
#include "common/auth/verified_credentials.h"

#include <gtest/gtest.h>

#include <string>

namespace scalws::common::auth {
namespace {

TEST(VerifiedCredentials, RemembersForTheTtlOnly) {
  VerifiedCredentials v(4, 1000);
  EXPECT_FALSE(v.contains(1, "Basic YW5uOnMzY3JldA==", 0));
  v.remember(1, "Basic YW5uOnMzY3JldA==", 0);
  EXPECT_TRUE(v.contains(1, "Basic YW5uOnMzY3JldA==", 999));
  EXPECT_FALSE(v.contains(1, "Basic YW5uOnMzY3JldA=", 999));
  EXPECT_FALSE(v.contains(1, "Basic YW5uOnMzY3JldA==", 1000));
  EXPECT_EQ(v.size(), 0u);  // the expired one was forgotten
}

TEST(VerifiedCredentials, ScopesAreApart) {
  VerifiedCredentials v(4, 1000);
  v.remember(1, "Basic x", 0);
  EXPECT_FALSE(v.contains(2, "Basic x", 1));
  EXPECT_TRUE(v.contains(1, "Basic x", 1));
}

TEST(VerifiedCredentials, TheOldestMakesRoom) {
  VerifiedCredentials v(3, 100000);
  for (int i = 0; i < 3; ++i) v.remember(7, "value" + std::to_string(i), i);
  v.remember(7, "value1", 10);  // refreshed: no room needed
  EXPECT_EQ(v.size(), 3u);
  v.remember(7, "value3", 11);
  EXPECT_EQ(v.size(), 3u);
  EXPECT_FALSE(v.contains(7, "value0", 12));
  EXPECT_TRUE(v.contains(7, "value1", 12));
  EXPECT_TRUE(v.contains(7, "value2", 12));
  EXPECT_TRUE(v.contains(7, "value3", 12));
}

TEST(VerifiedCredentials, NoCapacityRemembersNothing) {
  VerifiedCredentials v(0, 1000);
  v.remember(1, "Basic x", 0);
  EXPECT_FALSE(v.contains(1, "Basic x", 1));
}

}  // namespace
}  // namespace scalws::common::auth
