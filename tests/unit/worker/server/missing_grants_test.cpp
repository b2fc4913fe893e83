#include "worker/server/missing_grants.h"

#include <gtest/gtest.h>

namespace scalws::worker {
namespace {

common::config::SourceLocation missingAt(uint32_t line) {
  return common::config::SourceLocation{"site.toml", line, 1};
}

TEST(MissingGrantsTest, NothingMissingIsOk) {
  MissingGrants missing;
  EXPECT_TRUE(missing.empty());
  EXPECT_TRUE(missing.status().ok());
}

TEST(MissingGrantsTest, OneLinePerNameAtTheFirstRouteNamingIt) {
  MissingGrants missing;
  missing.add(missingAt(4), "route.app.name", "app", "api");
  missing.add(missingAt(9), "route.app.name", "app", "api");  // the same name again: not repeated
  missing.add(missingAt(12), "route.app.name", "app", "admin");
  EXPECT_FALSE(missing.empty());
  common::Status s = missing.status();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), common::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "site.toml:4:1: route.app.name: no app is assigned to this instance as \"api\"\n"
            "site.toml:12:1: route.app.name: no app is assigned to this instance as \"admin\"");
}

TEST(MissingGrantsTest, NamesTheFieldAndKindItIsGiven) {
  MissingGrants missing;
  missing.add(missingAt(2), "route.php.pool", "PHP pool", "main");
  EXPECT_EQ(missing.status().message(),
            "site.toml:2:1: route.php.pool: no PHP pool is assigned to this instance as \"main\"");
}

}  // namespace
}  // namespace scalws::worker
