#include <gtest/gtest.h>

#include "controller/state/state_store.h"
#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller::state {
namespace {

using common::StatusCode;

class AppStoreTest : public StoreTest {};

AppRecord app(const std::string& name) {
  AppRecord a;
  a.name = name;
  a.spec = "{\"name\":\"" + name + "\"}";
  return a;
}

TEST_F(AppStoreTest, AddsAssignsReleasesAndRemoves) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  ASSERT_TRUE(store.addApp(app("api")).ok());
  EXPECT_EQ(store.addApp(app("api")).status().code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(store.addApp(app("admin")).ok());

  ASSERT_TRUE(store.assignApp("api", "web", "").ok());
  common::Result<AppRecord> got = store.getApp("api");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->instance, std::optional<std::string>("web"));
  EXPECT_EQ(got->assigned_as, "api");
  EXPECT_EQ(got->spec, "{\"name\":\"api\"}");
  // One app per name and instance.
  EXPECT_EQ(store.assignApp("admin", "web", "api").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(store.assignApp("api", "nope", "").code(), StatusCode::kNotFound);
  EXPECT_EQ(store.removeApp("api").code(), StatusCode::kFailedPrecondition);

  ASSERT_TRUE(store.releaseApp("api").ok());
  ASSERT_TRUE(store.releaseApp("api").ok());  // twice is fine
  ASSERT_TRUE(store.assignApp("admin", "web", "api").ok());
  ASSERT_TRUE(store.removeApp("api").ok());
  EXPECT_EQ(store.getApp("api").status().code(), StatusCode::kNotFound);
  common::Result<std::vector<AppRecord>> all = store.listApps();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].assigned_as, "api");
}

}  // namespace
}  // namespace scalws::controller::state
