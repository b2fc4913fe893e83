#include "sandbox/landlock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cstring>
#include <iostream>

#include "sandbox/landlock_abi.h"
#include "tests/unit/sandbox/forked_child.h"
#include "tests/unit/sandbox/sandbox_fixtures.h"

namespace scalws::sandbox {
namespace {

namespace abi = landlock_abi;
using testing::ChildProbe;
using testing::ForkedChild;
using testing::SandboxTree;

bool mentions(const std::vector<std::string>& lines, std::string_view word) {
  for (const std::string& l : lines) {
    if (l.find(word) != std::string::npos) return true;
  }
  return false;
}

// --- Plans: what each ABI can enforce, without a kernel. ---

TEST(LandlockPlanTest, FsRightsGrowWithTheAbi) {
  EXPECT_EQ(landlockFsRightsForAbi(0), 0u);
  EXPECT_EQ(landlockFsRightsForAbi(1), (abi::kFsMakeSym << 1) - 1);
  EXPECT_EQ(landlockFsRightsForAbi(2), landlockFsRightsForAbi(1) | abi::kFsRefer);
  EXPECT_EQ(landlockFsRightsForAbi(3), landlockFsRightsForAbi(2) | abi::kFsTruncate);
  EXPECT_EQ(landlockFsRightsForAbi(4), landlockFsRightsForAbi(3));
  EXPECT_EQ(landlockFsRightsForAbi(5), landlockFsRightsForAbi(4) | abi::kFsIoctlDev);
  EXPECT_EQ(landlockFsRightsForAbi(7), landlockFsRightsForAbi(5));
}

TEST(LandlockPlanTest, Abi7HandlesEverythingAndDegradesNothing) {
  SandboxPolicy policy;
  auto plan = planLandlock(policy, 7);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->handledFs, landlockFsRightsForAbi(7));
  EXPECT_EQ(plan->handledNet, abi::kNetBindTcp | abi::kNetConnectTcp);
  EXPECT_EQ(plan->scoped, abi::kScopeAbstractUnixSocket | abi::kScopeSignal);
  EXPECT_TRUE(plan->degraded.empty()) << plan->degraded.front();
}

TEST(LandlockPlanTest, Abi3DegradesNetworkIoctlAndScopes) {
  SandboxPolicy policy;
  auto plan = planLandlock(policy, 3);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->handledFs & abi::kFsTruncate);
  EXPECT_FALSE(plan->handledFs & abi::kFsIoctlDev);
  EXPECT_EQ(plan->handledNet, 0u);
  EXPECT_EQ(plan->scoped, 0u);
  EXPECT_TRUE(mentions(plan->degraded, "TCP bind and connect"));
  EXPECT_TRUE(mentions(plan->degraded, "ioctl"));
  EXPECT_TRUE(mentions(plan->degraded, "scoped"));
  EXPECT_FALSE(mentions(plan->degraded, "truncate"));
}

TEST(LandlockPlanTest, Abi1DegradesTruncate) {
  SandboxPolicy policy;
  auto plan = planLandlock(policy, 1);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->handledFs & abi::kFsRefer);
  EXPECT_TRUE(mentions(plan->degraded, "truncate"));
}

TEST(LandlockPlanTest, Abi5And6) {
  SandboxPolicy policy;
  auto five = planLandlock(policy, 5);
  ASSERT_TRUE(five.ok());
  EXPECT_TRUE(five->handledFs & abi::kFsIoctlDev);
  EXPECT_EQ(five->scoped, 0u);
  EXPECT_EQ(five->degraded.size(), 1u);
  auto six = planLandlock(policy, 6);
  ASSERT_TRUE(six.ok());
  EXPECT_NE(six->scoped, 0u);
  EXPECT_TRUE(six->degraded.empty());
}

TEST(LandlockPlanTest, NoLandlockDegradesInOnModeAndIsRefusedInRequiredMode) {
  SandboxPolicy policy;
  auto on = planLandlock(policy, 0);
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(on->handledFs, 0u);
  EXPECT_TRUE(mentions(on->degraded, "not available"));

  policy.mode = SandboxMode::kRequired;
  auto required = planLandlock(policy, 0);
  ASSERT_FALSE(required.ok());
  EXPECT_EQ(required.status().code(), common::StatusCode::kFailedPrecondition);
}

TEST(LandlockPlanTest, RequiredModeNeedsAbi4) {
  SandboxPolicy policy;
  policy.mode = SandboxMode::kRequired;
  auto three = planLandlock(policy, 3);
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.status().message().find("ABI 4"), std::string::npos);
  auto four = planLandlock(policy, 4);
  ASSERT_TRUE(four.ok());
  EXPECT_NE(four->handledNet, 0u);
}

TEST(LandlockPlanTest, UnixConnectIsReportedAsUnrestrictedByPath) {
  SandboxPolicy policy;
  policy.unixConnect = true;
  auto plan = planLandlock(policy, 7);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(mentions(plan->degraded, "unix sockets"));
}

TEST(LandlockPlanTest, PathRightsByAccessAndKind) {
  uint64_t all = landlockFsRightsForAbi(7);
  uint64_t readDir = landlockPathRights(PathAccess::kReadOnly, true, all);
  EXPECT_EQ(readDir, abi::kFsReadFile | abi::kFsReadDir);
  EXPECT_EQ(landlockPathRights(PathAccess::kReadOnly, false, all), abi::kFsReadFile);

  uint64_t writeDir = landlockPathRights(PathAccess::kReadWrite, true, all);
  for (uint64_t r : {abi::kFsReadFile, abi::kFsWriteFile, abi::kFsTruncate, abi::kFsMakeReg,
                     abi::kFsMakeDir, abi::kFsRemoveFile, abi::kFsRefer}) {
    EXPECT_TRUE(writeDir & r) << landlockFsRightNames(r).front();
  }
  for (uint64_t r : {abi::kFsExecute, abi::kFsMakeSym, abi::kFsMakeChar, abi::kFsMakeBlock,
                     abi::kFsMakeFifo, abi::kFsMakeSock, abi::kFsIoctlDev}) {
    EXPECT_FALSE(writeDir & r) << landlockFsRightNames(r).front();
    EXPECT_FALSE(readDir & r) << landlockFsRightNames(r).front();
  }
  // A log file: append only, never truncated.
  EXPECT_EQ(landlockPathRights(PathAccess::kReadWrite, false, all), abi::kFsWriteFile);
  // Rights the ABI does not handle are never granted (the kernel would refuse the rule).
  uint64_t abi1 = landlockFsRightsForAbi(1);
  EXPECT_EQ(landlockPathRights(PathAccess::kReadWrite, true, abi1) & ~abi1, 0u);
}

// --- The kernel: Landlock alone, applied in a forked child that stays root. ---
// Root bypasses file permissions, so every refusal below comes from Landlock.

class LandlockKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    abi_ = probeLandlockAbi();
    if (abi_ < 6) GTEST_SKIP() << "needs Landlock ABI 6, the kernel has " << abi_;
    policy_.allowRoot = true;
    policy_.paths = {
        {tree_.docroot(), PathAccess::kReadOnly, PathKind::kDirectory},
        {tree_.cacheDir(), PathAccess::kReadWrite, PathKind::kDirectory},
        {tree_.logFile(), PathAccess::kReadWrite, PathKind::kFile},
        {"/bin", PathAccess::kReadOnly, PathKind::kDirectory},
    };
  }

  int abi_ = 0;
  SandboxTree tree_;
  SandboxPolicy policy_;
};

// The probed ABI is the one the kernel speaks: it accepts a ruleset with every right that
// ABI knows, and refuses the next right up.
TEST(LandlockProbeTest, ProbedAbiMatchesWhatTheKernelAccepts) {
  int version = probeLandlockAbi();
  if (version < 1) GTEST_SKIP() << "no Landlock in this kernel";
  std::cout << "Landlock ABI of this kernel: " << version << "\n";
  RecordProperty("landlock_abi", version);
  abi::RulesetAttr attr;
  attr.handled_access_fs = landlockFsRightsForAbi(version);
  if (version >= 4) attr.handled_access_net = abi::kNetBindTcp | abi::kNetConnectTcp;
  if (version >= 6) attr.scoped = abi::kScopeAbstractUnixSocket | abi::kScopeSignal;
  long fd = syscall(SYS_landlock_create_ruleset, &attr, abi::rulesetAttrSize(version), 0U);
  ASSERT_GE(fd, 0) << strerror(errno);
  close(static_cast<int>(fd));
  if (version <= 7) {  // ABI 1-7 define filesystem rights up to IOCTL_DEV at most
    uint64_t highest = landlockFsRightsForAbi(version);
    attr.handled_access_fs = highest | ((highest + 1) & ~highest);  // the next bit up
    fd = syscall(SYS_landlock_create_ruleset, &attr, abi::rulesetAttrSize(version), 0U);
    EXPECT_LT(fd, 0);
    EXPECT_EQ(errno, EINVAL);
  }
}

TEST_F(LandlockKernelTest, FilesystemRules) {
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    SandboxReport report;
    common::Status st = applyLandlock(policy_, report);
    if (!st.ok()) probe.fail(st.message());
    probe.record("enforced", report.landlock.enforced);
    probe.record("paths", static_cast<long>(report.landlock.paths.size()));

    // Reading beneath the docroot works, and returns the file.
    int fd = open((tree_.docroot() + "/index.html").c_str(), O_RDONLY | O_CLOEXEC);
    probe.recordErrno("read_docroot", fd);
    char buf[64] = {};
    probe.record("read_bytes", fd >= 0 ? read(fd, buf, sizeof(buf)) : -1);
    probe.record("read_matches", std::string(buf) == SandboxTree::kIndexBody);
    probe.record("list_docroot",
                 testing::tryOpen(tree_.docroot() + "/sub", O_RDONLY | O_DIRECTORY));
    // ... but never writing, truncating, creating or executing there.
    probe.record("write_docroot", testing::tryOpen(tree_.docroot() + "/index.html", O_WRONLY));
    probe.record("trunc_docroot",
                 testing::tryOpen(tree_.docroot() + "/index.html", O_RDONLY | O_TRUNC));
    probe.record("create_docroot",
                 testing::tryOpen(tree_.docroot() + "/new.html", O_WRONLY | O_CREAT));
    probe.recordErrno("mkdir_docroot", mkdir((tree_.docroot() + "/d").c_str(), 0755));
    probe.record("exec_bin", testing::tryExec("/bin/true"));

    // Outside every root: nothing, not even through a symlink inside the docroot.
    probe.record("read_outside", testing::tryOpen(tree_.secret(), O_RDONLY));
    probe.record("write_outside", testing::tryOpen(tree_.secret(), O_WRONLY));
    probe.record("create_outside", testing::tryOpen(tree_.outsideDir() + "/x", O_WRONLY | O_CREAT));
    probe.record("read_symlink", testing::tryOpen(tree_.docroot() + "/link-to-secret", O_RDONLY));
    probe.record("read_etc_passwd", testing::tryOpen("/etc/passwd", O_RDONLY));
    probe.record("read_proc", testing::tryOpen("/proc/self/status", O_RDONLY));

    // The cache dir: create, write, truncate, rename across directories, remove.
    std::string cache = tree_.cacheDir();
    probe.record("create_cache", testing::tryOpen(cache + "/a.tmp", O_WRONLY | O_CREAT));
    probe.record("trunc_cache", testing::tryOpen(cache + "/a.tmp", O_WRONLY | O_TRUNC));
    probe.recordErrno("mkdir_cache", mkdir((cache + "/d").c_str(), 0755));
    probe.recordErrno("rename_cache", rename((cache + "/a.tmp").c_str(), (cache + "/d/a").c_str()));
    probe.recordErrno("unlink_cache", unlink((cache + "/d/a").c_str()));
    probe.recordErrno("symlink_cache", symlink("/etc/passwd", (cache + "/l").c_str()));
    probe.recordErrno("mkfifo_cache", mkfifo((cache + "/f").c_str(), 0644));

    // The log file: append, never truncate or read back.
    probe.record("append_log", testing::tryOpen(tree_.logFile(), O_WRONLY | O_APPEND));
    probe.record("trunc_log", testing::tryOpen(tree_.logFile(), O_WRONLY | O_TRUNC));
    probe.recordErrno("truncate_log", truncate(tree_.logFile().c_str(), 0));
    probe.record("read_log", testing::tryOpen(tree_.logFile(), O_RDONLY));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(child.value("enforced"), 1);
  EXPECT_EQ(child.value("paths"), 4);

  EXPECT_CHILD_ERRNO(child, "read_docroot", 0);
  EXPECT_EQ(child.value("read_bytes"), long(std::strlen(SandboxTree::kIndexBody)));
  EXPECT_EQ(child.value("read_matches"), 1);
  EXPECT_CHILD_ERRNO(child, "list_docroot", 0);
  EXPECT_CHILD_ERRNO(child, "write_docroot", EACCES);
  EXPECT_CHILD_ERRNO(child, "trunc_docroot", EACCES);
  EXPECT_CHILD_ERRNO(child, "create_docroot", EACCES);
  EXPECT_CHILD_ERRNO(child, "mkdir_docroot", EACCES);
  EXPECT_CHILD_ERRNO(child, "exec_bin", EACCES);

  EXPECT_CHILD_ERRNO(child, "read_outside", EACCES);
  EXPECT_CHILD_ERRNO(child, "write_outside", EACCES);
  EXPECT_CHILD_ERRNO(child, "create_outside", EACCES);
  EXPECT_CHILD_ERRNO(child, "read_symlink", EACCES);
  EXPECT_CHILD_ERRNO(child, "read_etc_passwd", EACCES);
  EXPECT_CHILD_ERRNO(child, "read_proc", EACCES);

  EXPECT_CHILD_ERRNO(child, "create_cache", 0);
  EXPECT_CHILD_ERRNO(child, "trunc_cache", 0);
  EXPECT_CHILD_ERRNO(child, "mkdir_cache", 0);
  EXPECT_CHILD_ERRNO(child, "rename_cache", 0);
  EXPECT_CHILD_ERRNO(child, "unlink_cache", 0);
  EXPECT_CHILD_ERRNO(child, "symlink_cache", EACCES);
  EXPECT_CHILD_ERRNO(child, "mkfifo_cache", EACCES);

  EXPECT_CHILD_ERRNO(child, "append_log", 0);
  EXPECT_CHILD_ERRNO(child, "trunc_log", EACCES);
  EXPECT_CHILD_ERRNO(child, "truncate_log", EACCES);
  EXPECT_CHILD_ERRNO(child, "read_log", EACCES);
}

TEST_F(LandlockKernelTest, TcpConnectOnlyToAllowedPortsAndNoBind) {
  testing::TcpListener allowed;
  testing::TcpListener denied;
  // Without the sandbox both connects and the bind succeed: the test can fail.
  ASSERT_EQ(testing::connectLoopback(denied.port()), 0);
  ASSERT_EQ(testing::bindLoopback(0), 0);
  policy_.tcpConnectPorts = {allowed.port()};

  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    SandboxReport report;
    common::Status st = applyLandlock(policy_, report);
    if (!st.ok()) probe.fail(st.message());
    probe.record("ports", static_cast<long>(report.landlock.tcpConnectPorts.size()));
    probe.record("connect_allowed", testing::connectLoopback(allowed.port()));
    probe.record("connect_denied", testing::connectLoopback(denied.port()));
    probe.record("bind_any", testing::bindLoopback(0));
    probe.record("bind_allowed_port", testing::bindLoopback(allowed.port()));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(child.value("ports"), 1);
  EXPECT_CHILD_ERRNO(child, "connect_allowed", 0);
  EXPECT_CHILD_ERRNO(child, "connect_denied", EACCES);
  EXPECT_CHILD_ERRNO(child, "bind_any", EACCES);
  EXPECT_CHILD_ERRNO(child, "bind_allowed_port", EACCES);
}

TEST_F(LandlockKernelTest, SignalsAndAbstractUnixSocketsAreScoped) {
  testing::AbstractUnixListener listener;
  pid_t parent = getpid();
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    // Before the sandbox both work (root may signal its parent; the socket listens).
    probe.recordErrno("kill_before", kill(parent, 0));
    SandboxReport report;
    common::Status st = applyLandlock(policy_, report);
    if (!st.ok()) probe.fail(st.message());
    probe.recordErrno("kill_parent", kill(parent, 0));
    probe.recordErrno("kill_self", kill(getpid(), 0));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = listener.address();
    probe.recordErrno("connect_abstract",
                      connect(fd, reinterpret_cast<sockaddr*>(&addr), listener.length()));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_CHILD_ERRNO(child, "kill_before", 0);
  EXPECT_CHILD_ERRNO(child, "kill_parent", EPERM);
  EXPECT_CHILD_ERRNO(child, "kill_self", 0);
  EXPECT_CHILD_ERRNO(child, "connect_abstract", EPERM);
}

TEST_F(LandlockKernelTest, PathOfTheWrongKindIsAnError) {
  policy_.paths = {{tree_.logFile(), PathAccess::kReadOnly, PathKind::kDirectory}};
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    SandboxReport report;
    common::Status st = applyLandlock(policy_, report);
    probe.record("ok", st.ok());
    probe.record("invalid", st.code() == common::StatusCode::kInvalidArgument);
    probe.record("enforced", report.landlock.enforced);
  });
  child.finish();
  EXPECT_EQ(child.value("ok"), 0);
  EXPECT_EQ(child.value("invalid"), 1);
  EXPECT_EQ(child.value("enforced"), 0);
}

TEST_F(LandlockKernelTest, MissingPathIsAnError) {
  policy_.paths = {{tree_.path("nope"), PathAccess::kReadOnly, PathKind::kDirectory}};
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    SandboxReport report;
    common::Status st = applyLandlock(policy_, report);
    probe.record("ok", st.ok());
    probe.record("not_found", st.code() == common::StatusCode::kNotFound);
  });
  child.finish();
  EXPECT_EQ(child.value("ok"), 0);
  EXPECT_EQ(child.value("not_found"), 1);
}

}  // namespace
}  // namespace scalws::sandbox
