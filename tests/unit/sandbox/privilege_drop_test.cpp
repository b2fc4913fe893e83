#include "sandbox/privilege_drop.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/unit/sandbox/forked_child.h"

namespace scalws::sandbox {
namespace {

using testing::ChildProbe;
using testing::ForkedChild;

class PrivilegeDropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (CI runs the unit tests as root)";
    auto nobody = resolveIdentity("nobody");
    ASSERT_TRUE(nobody.ok()) << nobody.status().message();
    nobody_ = *nobody;
  }
  Identity nobody_;
};

TEST_F(PrivilegeDropTest, DropsToNobodyForGood) {
  SandboxPolicy policy;
  policy.identity = nobody_;
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    auto r = dropPrivileges(policy);
    if (!r.ok()) probe.fail(r.status().message());
    probe.record("changed", r->changed);
    probe.record("report_uid", r->uid);
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    getresuid(&ru, &eu, &su);
    getresgid(&rg, &eg, &sg);
    probe.record("ruid", ru);
    probe.record("euid", eu);
    probe.record("suid", su);
    probe.record("rgid", rg);
    probe.record("egid", eg);
    probe.record("sgid", sg);
    gid_t groups[64];
    int n = getgroups(64, groups);
    probe.record("groups", n);
    probe.record("group0", n > 0 ? groups[0] : -1);
    probe.recordErrno("setuid0", setuid(0));
    probe.recordErrno("seteuid0", seteuid(0));
    probe.recordErrno("setgid0", setgid(0));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(child.value("changed"), 1);
  EXPECT_EQ(child.value("report_uid"), 65534);
  for (const char* id : {"ruid", "euid", "suid", "rgid", "egid", "sgid"}) {
    EXPECT_EQ(child.value(id), 65534) << id;
  }
  EXPECT_EQ(child.value("groups"), static_cast<long>(nobody_.groups.size()));
  EXPECT_EQ(child.value("group0"), static_cast<long>(nobody_.groups.at(0)));
  EXPECT_CHILD_ERRNO(child, "setuid0", EPERM);
  EXPECT_CHILD_ERRNO(child, "seteuid0", EPERM);
  EXPECT_CHILD_ERRNO(child, "setgid0", EPERM);
}

TEST_F(PrivilegeDropTest, RefusesRootUnlessAllowed) {
  auto root = resolveIdentity("root");
  ASSERT_TRUE(root.ok());
  SandboxPolicy toRoot;
  toRoot.identity = *root;
  SandboxPolicy keepRoot;  // no identity: keep the current one, which is root
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    auto to = dropPrivileges(toRoot);
    probe.record("to_root_denied",
                 !to.ok() && to.status().code() == common::StatusCode::kPermissionDenied);
    auto keep = dropPrivileges(keepRoot);
    probe.record("keep_root_denied", !keep.ok());
    keepRoot.allowRoot = true;
    auto allowed = dropPrivileges(keepRoot);
    probe.record("allowed_ok", allowed.ok());
    probe.record("allowed_changed", allowed.ok() && allowed->changed);
    probe.record("uid_after", geteuid());
  });
  child.finish();
  ASSERT_EQ(child.error(), "");
  EXPECT_EQ(child.value("to_root_denied"), 1);
  EXPECT_EQ(child.value("keep_root_denied"), 1);
  EXPECT_EQ(child.value("allowed_ok"), 1);
  EXPECT_EQ(child.value("allowed_changed"), 0);
  EXPECT_EQ(child.value("uid_after"), 0);
}

TEST_F(PrivilegeDropTest, UnprivilegedCannotSwitchToAnotherUser) {
  SandboxPolicy toNobody;
  toNobody.identity = nobody_;
  SandboxPolicy toOther;
  toOther.identity = Identity{"other", 12345, 12345, {12345}};
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    auto first = dropPrivileges(toNobody);
    if (!first.ok()) probe.fail(first.status().message());
    // Dropping again to the identity we already have is fine...
    auto again = dropPrivileges(toNobody);
    probe.record("again_ok", again.ok());
    probe.record("again_changed", again.ok() && again->changed);
    // ... but switching to anybody else is not.
    auto other = dropPrivileges(toOther);
    probe.record("other_denied",
                 !other.ok() && other.status().code() == common::StatusCode::kPermissionDenied);
    probe.record("uid_after", geteuid());
  });
  child.finish();
  ASSERT_EQ(child.error(), "");
  EXPECT_EQ(child.value("again_ok"), 1);
  EXPECT_EQ(child.value("again_changed"), 0);
  EXPECT_EQ(child.value("other_denied"), 1);
  EXPECT_EQ(child.value("uid_after"), 65534);
}

}  // namespace
}  // namespace scalws::sandbox
