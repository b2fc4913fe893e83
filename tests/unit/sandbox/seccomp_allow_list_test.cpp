#include "sandbox/seccomp_allow_list.h"

#include <gtest/gtest.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <sys/socket.h>

#include <cerrno>
#include <map>
#include <string>

namespace scalws::sandbox {
namespace {

bool hasChecks(const SyscallAllowance& entry) {
  for (const ArgCheck& check : entry.checks) {
    if (check.op != ArgCheck::Op::kNone) return true;
  }
  return false;
}

TEST(SeccompAllowListTest, EveryNameIsASyscallLibseccompKnows) {
  for (const SyscallAllowance& entry : seccompAllowList()) {
    EXPECT_NE(seccomp_syscall_resolve_name(entry.name), __NR_SCMP_ERROR) << entry.name;
  }
  for (const SyscallErrno& entry : seccompErrnoList()) {
    EXPECT_NE(seccomp_syscall_resolve_name(entry.name), __NR_SCMP_ERROR) << entry.name;
  }
}

TEST(SeccompAllowListTest, EveryEntrySaysWhy) {
  for (const SyscallAllowance& entry : seccompAllowList()) {
    ASSERT_NE(entry.why, nullptr) << entry.name;
    EXPECT_GT(std::string(entry.why).size(), 3u) << entry.name;
  }
}

TEST(SeccompAllowListTest, NothingForbiddenIsAllowed) {
  for (const char* forbidden : seccompNeverAllowed()) {
    for (const SyscallAllowance& entry : seccompAllowList()) {
      EXPECT_NE(std::string(entry.name), forbidden) << forbidden << " is in the allow-list";
    }
  }
  // The forbidden list itself names what no worker may ever do.
  std::vector<std::string> never(seccompNeverAllowed().begin(), seccompNeverAllowed().end());
  for (const char* required :
       {"execve", "execveat", "fork", "vfork", "ptrace", "mount", "bpf", "keyctl",
        "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register"}) {
    EXPECT_NE(std::find(never.begin(), never.end(), required), never.end()) << required;
  }
}

// An unconditional entry would silently void the argument checks of the same syscall.
TEST(SeccompAllowListTest, ASyscallIsEitherAlwaysAllowedOrAlwaysChecked) {
  std::map<std::string, std::pair<int, int>> counts;  // name -> {unchecked, checked}
  for (const SyscallAllowance& entry : seccompAllowList()) {
    auto& c = counts[entry.name];
    if (!hasChecks(entry)) {
      ++c.first;
    } else {
      ++c.second;
    }
  }
  for (const auto& [name, c] : counts) {
    EXPECT_FALSE(c.first > 0 && c.second > 0) << name << " mixes checked and unchecked entries";
    EXPECT_LE(c.first, 1) << name << " is listed twice";
  }
}

TEST(SeccompAllowListTest, ArgumentChecksWhereTheyMatter) {
  std::map<std::string, int> checked;
  for (const SyscallAllowance& entry : seccompAllowList()) {
    if (hasChecks(entry)) ++checked[entry.name];
    if (std::string(entry.name) == "clone") {
      const ArgCheck& flags = entry.checks[0];
      EXPECT_EQ(flags.op, ArgCheck::Op::kMaskedEq);
      EXPECT_TRUE(flags.mask & CLONE_THREAD);
      EXPECT_EQ(flags.value, static_cast<uint64_t>(CLONE_THREAD));
      EXPECT_TRUE(flags.mask & CLONE_NEWUSER);
    }
  }
  for (const char* name : {"socket", "clone", "ioctl", "prctl", "tgkill", "prlimit64", "fcntl",
                           "sendto", "sendmsg", "sendmmsg"}) {
    EXPECT_GT(checked[name], 0) << name << " should be allowed only with argument checks";
  }
}

// Every AF_INET/AF_INET6 socket entry pins the protocol (0 or IPPROTO_TCP), every send
// entry refuses MSG_FASTOPEN: Landlock's TCP port rules see neither MPTCP nor a fast-open
// connect.
TEST(SeccompAllowListTest, InetSocketsPinTheProtocolAndSendsRefuseFastOpen) {
  int inetEntries = 0;
  for (const SyscallAllowance& entry : seccompAllowList()) {
    std::string name = entry.name;
    if (name == "socket" &&
        (entry.checks[0].value == AF_INET || entry.checks[0].value == AF_INET6)) {
      ++inetEntries;
      const ArgCheck& protocol = entry.checks[2];
      EXPECT_EQ(protocol.op, ArgCheck::Op::kMaskedEq);
      EXPECT_EQ(protocol.arg, 2);
      EXPECT_TRUE(protocol.value == 0 || protocol.value == IPPROTO_TCP) << protocol.value;
    }
    if (name == "sendto" || name == "sendmsg" || name == "sendmmsg") {
      const ArgCheck& flags = entry.checks[0];
      EXPECT_EQ(flags.arg, name == "sendmsg" ? 2 : 3) << name;
      EXPECT_TRUE(flags.mask & MSG_FASTOPEN) << name;
      EXPECT_EQ(flags.value & MSG_FASTOPEN, 0u) << name;
    }
  }
  EXPECT_EQ(inetEntries, 4);
}

TEST(SeccompAllowListTest, Clone3FailsWithEnosysSoGlibcFallsBackToClone) {
  bool found = false;
  for (const SyscallErrno& entry : seccompErrnoList()) {
    if (std::string(entry.name) == "clone3") {
      found = true;
      EXPECT_EQ(entry.error, ENOSYS);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace scalws::sandbox
