#include "sandbox/exec_sandbox.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>

#include "sandbox/seccomp_deny_list.h"
#include "tests/unit/sandbox/forked_child.h"

namespace scalws::sandbox {
namespace {

using testing::ChildProbe;
using testing::ForkedChild;

TEST(SeccompDenyListTest, CompilesAndNamesEveryEntrysReason) {
  for (const SyscallDenial& entry : seccompDenyList()) {
    EXPECT_NE(std::string(entry.why), "") << entry.name;
  }
  SeccompReport report;
  common::Result<std::vector<sock_filter>> program = compileSeccompDenyList(report);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_FALSE(program->empty());
  EXPECT_TRUE(report.denyList);
  EXPECT_GT(report.deniedSyscalls, 30u);
}

TEST(ExecSandboxTest, RefusesRoot) {
  ExecSandboxSpec spec;
  spec.identity = {"root", 0, 0, {0}};
  EXPECT_FALSE(ExecSandbox::prepare(spec).ok());
}

TEST(ExecSandboxTest, AChildThatEntersItIsNobodyWithoutPtraceMountOrWrites) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  passwd* pw = getpwnam("nobody");
  ASSERT_NE(pw, nullptr);
  ExecSandboxSpec spec;
  spec.identity = {"nobody", pw->pw_uid, pw->pw_gid, {pw->pw_gid}};
  spec.paths = {{"/usr", PathAccess::kReadExecute, PathKind::kDirectory},
                {"/dev/null", PathAccess::kDevice, PathKind::kAny}};
  common::Result<ExecSandbox> box = ExecSandbox::prepare(spec);
  ASSERT_TRUE(box.ok()) << box.status().message();
  EXPECT_TRUE(box->report().seccomp.denyList);
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    ExecSandbox::Step step = box->enter();
    probe.record("step", static_cast<long>(step));
    probe.record("uid", static_cast<long>(getuid()));
    // TRACEME: allowed to anyone but for the deny-list (an attach would fail on
    // permissions alone).
    probe.recordErrno("ptrace", ptrace(PTRACE_TRACEME, 0, nullptr, nullptr));
    probe.recordErrno("mount", mount("none", "/mnt", "tmpfs", 0, nullptr));
    probe.recordErrno("read_usr", open("/usr/bin/env", O_RDONLY | O_CLOEXEC));
    probe.recordErrno("read_etc", open("/etc/hostname", O_RDONLY | O_CLOEXEC));
    probe.recordErrno("devnull", open("/dev/null", O_WRONLY | O_CLOEXEC));
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    probe.recordErrno("bind", bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(child.value("step"), static_cast<long>(ExecSandbox::Step::kNone));
  EXPECT_EQ(child.value("uid"), static_cast<long>(pw->pw_uid));
  EXPECT_EQ(child.value("ptrace"), EPERM);
  EXPECT_EQ(child.value("mount"), EPERM);
  EXPECT_EQ(child.value("read_usr"), 0);
  EXPECT_EQ(child.value("devnull"), 0);
  if (box->report().landlock.abi > 0) {
    EXPECT_EQ(child.value("read_etc"), EACCES);
  }
  if (box->report().landlock.abi >= 4) {
    EXPECT_EQ(child.value("bind"), EACCES);
  }
}

}  // namespace
}  // namespace scalws::sandbox
