#include "ipc/ops.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ipc/message.h"

namespace scalws::ipc {
namespace {

TEST(OpsTest, WorkerChannelOpsGoTheDesignedWay) {
  struct Row {
    const char* name;
    Role from;
    Role to;
    bool reply;
  };
  const Row rows[] = {
      {"hello", Role::kWorker, Role::kController, true},
      {"config", Role::kController, Role::kWorker, true},
      {"listeners", Role::kController, Role::kWorker, true},
      {"ready", Role::kWorker, Role::kController, true},
      {"reload", Role::kController, Role::kWorker, true},
      {"stop", Role::kController, Role::kWorker, true},
      {"metrics", Role::kWorker, Role::kController, false},
  };
  for (const Row& row : rows) {
    const OpSpec* op = findOp(row.name, row.from, row.to);
    ASSERT_NE(op, nullptr) << row.name;
    EXPECT_EQ(op->expects_reply, row.reply) << row.name;
    // Not the other way round, and not from scalwsctl.
    EXPECT_EQ(findOp(row.name, row.to, row.from), nullptr) << row.name;
    EXPECT_EQ(findOp(row.name, Role::kCtl, row.to), nullptr) << row.name;
  }
}

TEST(OpsTest, FrontChannelOpsGoOnlyBetweenFrontAndController) {
  struct Row {
    const char* name;
    Role from;
    Role to;
    bool reply;
  };
  const Row rows[] = {
      {"front.hello", Role::kFront, Role::kController, true},
      {"front.config", Role::kController, Role::kFront, true},
      {"front.ready", Role::kFront, Role::kController, true},
      {"front.route", Role::kController, Role::kFront, true},
      {"front.unroute", Role::kController, Role::kFront, true},
      {"front.stop", Role::kController, Role::kFront, true},
      {"front.metrics", Role::kFront, Role::kController, false},
      {"front.stderr", Role::kController, Role::kFront, true},
  };
  for (const Row& row : rows) {
    const OpSpec* op = findOp(row.name, row.from, row.to);
    ASSERT_NE(op, nullptr) << row.name;
    EXPECT_EQ(op->expects_reply, row.reply) << row.name;
    EXPECT_EQ(findOp(row.name, row.to, row.from), nullptr) << row.name;
    for (Role other : {Role::kWorker, Role::kCtl}) {
      EXPECT_EQ(findOp(row.name, other, row.to), nullptr) << row.name;
      EXPECT_EQ(findOp(row.name, row.from, other), nullptr) << row.name;
    }
  }
  // The worker's side of a shared address: the names, from the controller only.
  EXPECT_NE(findOp("shared_names", Role::kController, Role::kWorker), nullptr);
  EXPECT_EQ(findOp("shared_names", Role::kFront, Role::kWorker), nullptr);
  // A front may not speak the worker's ops.
  EXPECT_EQ(findOp("hello", Role::kFront, Role::kController), nullptr);
  EXPECT_EQ(findOp("metrics", Role::kFront, Role::kController), nullptr);
}

TEST(OpsTest, ControlOpsComeFromCtlAndSayWhetherTheyWrite) {
  const OpSpec* list = findOp("instance.list", Role::kCtl, Role::kController);
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->access, Access::kRead);
  const OpSpec* add = findOp("instance.add", Role::kCtl, Role::kController);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->access, Access::kWrite);
  EXPECT_EQ(findOp("instance.add", Role::kWorker, Role::kController), nullptr);
  ASSERT_NE(findOp("status"), nullptr);
  EXPECT_EQ(findOp("status")->access, Access::kRead);
}

TEST(OpsTest, UnknownNamesAreNotFound) {
  EXPECT_EQ(findOp("no.such.op"), nullptr);
  EXPECT_EQ(findOp(""), nullptr);
  EXPECT_EQ(findOp("HELLO"), nullptr);
}

TEST(OpsTest, TableIsWellFormed) {
  std::set<std::string_view> names;
  for (const OpSpec& op : allOps()) {
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate op " << op.name;
    EXPECT_FALSE(op.name.empty());
    EXPECT_LE(op.name.size(), kMaxOpNameLength) << op.name;
    EXPECT_NE(op.from, op.to) << op.name;
    EXPECT_FALSE(op.summary.empty()) << op.name;
    // scalwsctl waits for every answer; it has no notification to send.
    if (op.from == Role::kCtl) {
      EXPECT_TRUE(op.expects_reply) << op.name;
    }
    // Nothing is sent to scalwsctl unasked.
    EXPECT_NE(op.to, Role::kCtl) << op.name;
  }
  EXPECT_GE(names.size(), 7u);
}

TEST(OpsTest, RoleNames) {
  EXPECT_EQ(roleName(Role::kController), "controller");
  EXPECT_EQ(roleName(Role::kWorker), "worker");
  EXPECT_EQ(roleName(Role::kCtl), "scalwsctl");
  EXPECT_EQ(roleName(Role::kFront), "front");
}

}  // namespace
}  // namespace scalws::ipc
