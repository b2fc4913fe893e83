// The pieces the control handlers share: list replies, the named record, assignment
// arguments and the check that running workers no longer use a record.
#include "controller/server/handler_support.h"

#include <gtest/gtest.h>

#include <map>

namespace scalws::controller {
namespace {

using namespace handler_names;

struct PoolLikeGrant {
  std::string name;
  std::string address;
};

TEST(HandlerSupportTest, ListReplyDescribesEveryRecordUnderItsKey) {
  Result<Json> reply =
      listReply("things", Result<std::vector<int>>(std::vector<int>{1, 2}), [](int n) {
        return Json{{"n", n}};
      });
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(*reply, (Json{{"things", Json::array({Json{{"n", 1}}, Json{{"n", 2}}})}}));
  Result<Json> empty = listReply("things", Result<std::vector<int>>(std::vector<int>()),
                                 [](int n) { return Json(n); });
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, (Json{{"things", Json::array()}}));
}

TEST(HandlerSupportTest, ListReplyPassesTheStoresErrorOn) {
  Result<Json> reply = listReply("things", Result<std::vector<int>>(common::notFound("gone")),
                                 [](int n) { return Json(n); });
  EXPECT_EQ(reply.status().code(), StatusCode::kNotFound);
}

TEST(HandlerSupportTest, NamedRecordReadsTheNameThenTheStore) {
  std::map<std::string, int> stored{{"a", 1}};
  auto get = [&stored](const std::string& name) -> Result<int> {
    auto it = stored.find(name);
    if (it == stored.end()) return common::notFound("no " + name);
    return it->second;
  };
  Result<int> found = namedRecord(Json{{"name", "a"}}, get);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, 1);
  EXPECT_EQ(namedRecord(Json{{"name", "b"}}, get).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(namedRecord(Json::object(), get).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(namedRecord(Json{{"name", 3}}, get).status().code(), StatusCode::kInvalidArgument);
}

TEST(HandlerSupportTest, AssignArgsTakeNameInstanceAndAnOptionalValidAs) {
  Result<AssignArgs> plain = parseAssignArgs(Json{{"name", "p"}, {"instance", "web"}}, "pool");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->name, "p");
  EXPECT_EQ(plain->instance, "web");
  EXPECT_EQ(plain->as, "");
  Result<AssignArgs> as =
      parseAssignArgs(Json{{"name", "p"}, {"instance", "web"}, {"as", "php"}}, "pool");
  ASSERT_TRUE(as.ok());
  EXPECT_EQ(as->as, "php");
  EXPECT_FALSE(parseAssignArgs(Json{{"name", "p"}}, "pool").ok());
  EXPECT_FALSE(parseAssignArgs(Json{{"instance", "web"}}, "pool").ok());
  Result<AssignArgs> bad =
      parseAssignArgs(Json{{"name", "p"}, {"instance", "web"}, {"as", "no/slash"}}, "app");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  // Given, even empty, it must be a name.
  EXPECT_FALSE(parseAssignArgs(Json{{"name", "p"}, {"instance", "web"}, {"as", ""}}, "app").ok());
}

TEST(HandlerSupportTest, UnusedUnlessARunningInstancesWorkersHoldAMatchingGrant) {
  std::vector<state::InstanceRecord> instances(3);
  instances[0].name = "stopped";
  instances[1].name = "other";
  instances[2].name = "web";
  std::map<std::string, std::vector<PoolLikeGrant>> running{
      {"other", {{"php", "unix:/b.sock"}}},
      {"web", {{"legacy", "unix:/c.sock"}, {"php", "unix:/a.sock"}}}};
  std::function<std::optional<std::vector<PoolLikeGrant>>(const std::string&)> grants =
      [&running](const std::string& instance) -> std::optional<std::vector<PoolLikeGrant>> {
    auto it = running.find(instance);
    if (it == running.end()) return std::nullopt;
    return it->second;
  };
  auto at = [](std::string address) {
    return std::function<bool(const PoolLikeGrant&)>(
        [address](const PoolLikeGrant& g) { return g.address == address; });
  };
  EXPECT_TRUE(
      checkUnusedByWorkers<PoolLikeGrant>("PHP pool 'x'", instances, grants, at("unix:/z.sock"))
          .ok());
  Status used =
      checkUnusedByWorkers<PoolLikeGrant>("PHP pool 'a'", instances, grants, at("unix:/a.sock"));
  EXPECT_EQ(used.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(used.message(),
            "PHP pool 'a' is still used by the running workers of instance 'web' (as php); "
            "reload or stop that instance first");
  EXPECT_TRUE(checkUnusedByWorkers<PoolLikeGrant>("app 'a'", {}, grants, at("unix:/a.sock")).ok());
}

}  // namespace
}  // namespace scalws::controller
