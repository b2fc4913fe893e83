#include "sandbox/seccomp_filter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <csignal>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "sandbox/seccomp_allow_list.h"
#include "tests/support/try_socket.h"
#include "tests/unit/sandbox/forked_child.h"
#include "tests/unit/sandbox/sandbox_fixtures.h"

namespace scalws::sandbox {
namespace {

using testing::ChildProbe;
using testing::ForkedChild;

using ::scalws::testing::trySocket;

TEST(SeccompFilterTest, FilterTextListsAllowedSyscallsOnly) {
  SandboxPolicy policy;
  auto text = seccompFilterText(policy);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text->find("\"writev\""), std::string::npos) << *text;
  EXPECT_NE(text->find("\"socket\""), std::string::npos);
  EXPECT_EQ(text->find("\"execve\""), std::string::npos);
  EXPECT_EQ(text->find("\"fork\""), std::string::npos);
}

// The PFC block of one syscall: from its "# filter for syscall" line to the next comment.
std::string pfcBlock(const std::string& text, const std::string& syscall) {
  size_t start = text.find("# filter for syscall \"" + syscall + "\"");
  if (start == std::string::npos) return "";
  size_t end = text.find("  #", start + 1);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(SeccompFilterTest, UnixSocketsOnlyWhenThePolicyNeedsThem) {
  SandboxPolicy policy;
  auto without = seccompFilterText(policy);
  policy.unixConnect = true;
  auto with = seccompFilterText(policy);
  ASSERT_TRUE(without.ok() && with.ok());
  const std::string unixFamily = "$a0.lo32 & 0xffffffff == " + std::to_string(AF_UNIX) + ")";
  const std::string inetFamily = "$a0.lo32 & 0xffffffff == " + std::to_string(AF_INET) + ")";
  std::string socketWithout = pfcBlock(*without, "socket");
  std::string socketWith = pfcBlock(*with, "socket");
  EXPECT_NE(socketWithout.find(inetFamily), std::string::npos) << socketWithout;
  EXPECT_EQ(socketWithout.find(unixFamily), std::string::npos) << socketWithout;
  EXPECT_NE(socketWith.find(unixFamily), std::string::npos) << socketWith;
}

TEST(SeccompFilterTest, ThreadsWorkButProcessesDoNot) {
  SandboxPolicy policy;
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    SandboxReport report;
    common::Status st = applySeccomp(policy, report);
    if (!st.ok()) probe.fail(st.message());
    probe.record("enforced", report.seccomp.enforced);
    probe.record("allowed", static_cast<long>(report.seccomp.allowedSyscalls));
    // pthread_create: clone3 is refused with ENOSYS, glibc falls back to clone.
    int fromThread = 0;
    std::thread t([&] { fromThread = 42; });
    t.join();
    probe.record("thread", fromThread);
    probe.recordErrno("clone3", syscall(SYS_clone3, nullptr, 0));
    probe.record("fork", testing::tryFork());
    probe.record("execve", testing::tryExec("/bin/true"));
    probe.recordErrno("ptrace", ptrace(PTRACE_TRACEME, 0, nullptr, nullptr));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(child.value("enforced"), 1);
  std::set<std::string> expected;  // distinct syscalls of this architecture in the table
  for (const SyscallAllowance& entry : seccompAllowList()) {
    if (!entry.onlyWithUnixConnect && !entry.onlyWithUdpDatagrams &&
        seccomp_syscall_resolve_name(entry.name) >= 0) {
      expected.insert(entry.name);
    }
  }
  EXPECT_EQ(child.value("allowed"), static_cast<long>(expected.size()));
  EXPECT_EQ(child.value("thread"), 42);
  EXPECT_CHILD_ERRNO(child, "clone3", ENOSYS);
  EXPECT_CHILD_ERRNO(child, "fork", EPERM);
  EXPECT_CHILD_ERRNO(child, "execve", EPERM);
  EXPECT_CHILD_ERRNO(child, "ptrace", EPERM);
}

TEST(SeccompFilterTest, BatchedDatagramReceivesOnlyForHttp3) {
  for (bool udp : {false, true}) {
    SandboxPolicy policy;
    policy.udpDatagrams = udp;
    ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
      SandboxReport report;
      common::Status st = applySeccomp(policy, report);
      if (!st.ok()) probe.fail(st.message());
      probe.record("reported", report.seccomp.udpDatagrams);
      // On a bad fd: EBADF when the filter lets the call through, EPERM when it does not.
      probe.recordErrno("recvmmsg", recvmmsg(-1, nullptr, 0, 0, nullptr));
      probe.recordErrno("sendmmsg", sendmmsg(-1, nullptr, 0, 0));
      probe.recordErrno("sendmsg", sendmsg(-1, nullptr, 0));
      probe.record("udp_socket", trySocket(AF_INET, SOCK_DGRAM));
    });
    int status = child.finish();
    ASSERT_EQ(child.error(), "");
    ASSERT_TRUE(WIFEXITED(status)) << status;
    SCOPED_TRACE(udp ? "udpDatagrams" : "no udpDatagrams");
    EXPECT_EQ(child.value("reported"), udp ? 1 : 0);
    EXPECT_CHILD_ERRNO(child, "recvmmsg", udp ? EBADF : EPERM);
    EXPECT_CHILD_ERRNO(child, "sendmmsg", EBADF);  // allowed for all (without MSG_FASTOPEN)
    EXPECT_CHILD_ERRNO(child, "sendmsg", EBADF);
    EXPECT_CHILD_ERRNO(child, "udp_socket", EPERM);  // the sockets are inherited, never made
  }
}

TEST(SeccompFilterTest, SocketFamiliesAndTypes) {
  // Without the filter these succeed as root: the test can fail.
  ASSERT_EQ(trySocket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), 0);
  ASSERT_EQ(trySocket(AF_INET, SOCK_DGRAM), 0);
  for (bool unixConnect : {false, true}) {
    SandboxPolicy policy;
    policy.unixConnect = unixConnect;
    ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
      SandboxReport report;
      common::Status st = applySeccomp(policy, report);
      if (!st.ok()) probe.fail(st.message());
      probe.record("inet_stream", trySocket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK));
      probe.record("inet6_stream", trySocket(AF_INET6, SOCK_STREAM));
      probe.record("inet_dgram", trySocket(AF_INET, SOCK_DGRAM));
      probe.record("inet_raw", trySocket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
      probe.record("netlink", trySocket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
      probe.record("packet", trySocket(AF_PACKET, SOCK_RAW));
      probe.record("unix_stream", trySocket(AF_UNIX, SOCK_STREAM));
      probe.record("unix_dgram", trySocket(AF_UNIX, SOCK_DGRAM));
      int pair[2];
      probe.recordErrno("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, pair));
    });
    int status = child.finish();
    ASSERT_EQ(child.error(), "");
    ASSERT_TRUE(WIFEXITED(status)) << status;
    SCOPED_TRACE(unixConnect ? "unixConnect" : "no unixConnect");
    EXPECT_CHILD_ERRNO(child, "inet_stream", 0);
    EXPECT_CHILD_ERRNO(child, "inet6_stream", 0);
    EXPECT_CHILD_ERRNO(child, "inet_dgram", EPERM);
    EXPECT_CHILD_ERRNO(child, "inet_raw", EPERM);
    EXPECT_CHILD_ERRNO(child, "netlink", EPERM);
    EXPECT_CHILD_ERRNO(child, "packet", EPERM);
    EXPECT_CHILD_ERRNO(child, "unix_stream", unixConnect ? 0 : EPERM);
    EXPECT_CHILD_ERRNO(child, "unix_dgram", EPERM);
    EXPECT_CHILD_ERRNO(child, "socketpair", 0);
  }
}

// MPTCP and SCTP stream sockets are not TCP to Landlock's port rules: only protocol 0 and
// IPPROTO_TCP may be asked for.
TEST(SeccompFilterTest, InetStreamSocketsAreTcpOnly) {
  // Without the filter an MPTCP socket opens (net.mptcp.enabled is on by default): the
  // test can fail.
  ASSERT_EQ(trySocket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP), 0);
  SandboxPolicy policy;
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    SandboxReport report;
    common::Status st = applySeccomp(policy, report);
    if (!st.ok()) probe.fail(st.message());
    probe.record("default", trySocket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    probe.record("tcp", trySocket(AF_INET, SOCK_STREAM, IPPROTO_TCP));
    probe.record("tcp6", trySocket(AF_INET6, SOCK_STREAM, IPPROTO_TCP));
    probe.record("mptcp", trySocket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP));
    probe.record("mptcp6", trySocket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_MPTCP));
    probe.record("sctp", trySocket(AF_INET, SOCK_STREAM, IPPROTO_SCTP));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_CHILD_ERRNO(child, "default", 0);
  EXPECT_CHILD_ERRNO(child, "tcp", 0);
  EXPECT_CHILD_ERRNO(child, "tcp6", 0);
  EXPECT_CHILD_ERRNO(child, "mptcp", EPERM);
  EXPECT_CHILD_ERRNO(child, "mptcp6", EPERM);
  EXPECT_CHILD_ERRNO(child, "sctp", EPERM);
}

// MSG_FASTOPEN connects from inside sendto/sendmsg, past the connect() hook Landlock checks.
TEST(SeccompFilterTest, FastOpenIsRefusedInEverySendCall) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto* to = reinterpret_cast<sockaddr*>(&addr);
  // Without the filter a fast-open send connects: the test can fail.
  {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(sendto(fd, "x", 1, MSG_FASTOPEN | MSG_NOSIGNAL, to, sizeof(addr)), 1)
        << strerror(errno);
    close(fd);
  }
  SandboxPolicy policy;
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    SandboxReport report;
    common::Status st = applySeccomp(policy, report);
    if (!st.ok()) probe.fail(st.message());
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    probe.recordErrno("sendto", sendto(fd, "x", 1, MSG_FASTOPEN, to, sizeof(addr)));
    iovec iov{const_cast<char*>("x"), 1};
    msghdr msg{};
    msg.msg_name = to;
    msg.msg_namelen = sizeof(addr);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    probe.recordErrno("sendmsg", sendmsg(fd, &msg, MSG_FASTOPEN | MSG_NOSIGNAL));
    mmsghdr batch{msg, 0};
    probe.recordErrno("sendmmsg", sendmmsg(fd, &batch, 1, MSG_FASTOPEN));
    // The ordinary way still works: connect (Landlock would check the port here), then send.
    probe.recordErrno("connect", connect(fd, to, sizeof(addr)));
    probe.recordErrno("send", send(fd, "x", 1, MSG_NOSIGNAL));
    probe.recordErrno("sendmsg_plain", sendmsg(fd, &msg, MSG_NOSIGNAL));
    close(fd);
  });
  int status = child.finish();
  close(listener);
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_CHILD_ERRNO(child, "sendto", EPERM);
  EXPECT_CHILD_ERRNO(child, "sendmsg", EPERM);
  EXPECT_CHILD_ERRNO(child, "sendmmsg", EPERM);
  EXPECT_CHILD_ERRNO(child, "connect", 0);
  EXPECT_CHILD_ERRNO(child, "send", 0);
  EXPECT_CHILD_ERRNO(child, "sendmsg_plain", 0);
}

// F_SETOWN + F_SETSIG would let a worker signal other processes of its uid where Landlock
// does not scope signals (before 6.12); only flag and status commands are allowed.
TEST(SeccompFilterTest, FcntlOnlyFlagCommands) {
  SandboxPolicy policy;
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int pipes[2];
    if (pipe2(pipes, O_CLOEXEC) != 0) probe.fail("pipe2");
    // Without the filter these work: the refusals below come from it.
    probe.recordErrno("setown_before", fcntl(fd, F_SETOWN, getpid()));
    SandboxReport report;
    common::Status st = applySeccomp(policy, report);
    if (!st.ok()) probe.fail(st.message());
    int flags = fcntl(fd, F_GETFL);
    probe.recordErrno("getfl", flags);
    probe.recordErrno("setfl", fcntl(fd, F_SETFL, flags | O_NONBLOCK));
    probe.recordErrno("setfl_async", fcntl(fd, F_SETFL, flags | O_ASYNC));
    probe.recordErrno("getfd", fcntl(fd, F_GETFD));
    probe.recordErrno("setfd", fcntl(fd, F_SETFD, FD_CLOEXEC));
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    probe.recordErrno("dupfd_cloexec", dup);
    if (dup >= 0) close(dup);
    probe.recordErrno("dupfd", fcntl(fd, F_DUPFD, 0));
    probe.recordErrno("setown", fcntl(fd, F_SETOWN, getppid()));
    f_owner_ex owner{F_OWNER_PID, getppid()};
    probe.recordErrno("setown_ex", fcntl(fd, F_SETOWN_EX, &owner));
    probe.recordErrno("getown", fcntl(fd, F_GETOWN));
    probe.recordErrno("setsig", fcntl(fd, F_SETSIG, SIGUSR1));
    probe.recordErrno("notify", fcntl(fd, F_NOTIFY, DN_MODIFY));
    probe.recordErrno("setlease", fcntl(fd, F_SETLEASE, F_RDLCK));
    probe.recordErrno("setpipe_sz", fcntl(pipes[0], F_SETPIPE_SZ, 1 << 20));
    struct flock lock {};
    lock.l_type = F_WRLCK;
    probe.recordErrno("setlk", fcntl(pipes[0], F_SETLK, &lock));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_CHILD_ERRNO(child, "setown_before", 0);
  EXPECT_CHILD_ERRNO(child, "getfl", 0);
  EXPECT_CHILD_ERRNO(child, "setfl", 0);
  EXPECT_CHILD_ERRNO(child, "setfl_async", EPERM);
  EXPECT_CHILD_ERRNO(child, "getfd", 0);
  EXPECT_CHILD_ERRNO(child, "setfd", 0);
  EXPECT_CHILD_ERRNO(child, "dupfd_cloexec", 0);
  EXPECT_CHILD_ERRNO(child, "dupfd", EPERM);
  EXPECT_CHILD_ERRNO(child, "setown", EPERM);
  EXPECT_CHILD_ERRNO(child, "setown_ex", EPERM);
  EXPECT_CHILD_ERRNO(child, "getown", EPERM);
  EXPECT_CHILD_ERRNO(child, "setsig", EPERM);
  EXPECT_CHILD_ERRNO(child, "notify", EPERM);
  EXPECT_CHILD_ERRNO(child, "setlease", EPERM);
  EXPECT_CHILD_ERRNO(child, "setpipe_sz", EPERM);
  EXPECT_CHILD_ERRNO(child, "setlk", EPERM);
}

TEST(SeccompFilterTest, ArgumentChecksAndForbiddenCalls) {
  pid_t parent = getpid();
  SandboxPolicy policy;
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    SandboxReport report;
    common::Status st = applySeccomp(policy, report);
    if (!st.ok()) probe.fail(st.message());
    int pending = 0;
    probe.recordErrno("ioctl_fionread", ioctl(sock, FIONREAD, &pending));
    winsize ws;
    probe.recordErrno("ioctl_tiocgwinsz", ioctl(sock, TIOCGWINSZ, &ws));
    probe.recordErrno("prctl_set_name", prctl(PR_SET_NAME, "probe", 0, 0, 0));
    probe.recordErrno("prctl_dumpable", prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
    probe.recordErrno("tgkill_self", syscall(SYS_tgkill, getpid(), gettid(), 0));
    probe.recordErrno("tgkill_parent", syscall(SYS_tgkill, parent, parent, 0));
    probe.recordErrno("kill_parent", kill(parent, 0));
    rlimit lim;
    probe.recordErrno("getrlimit", getrlimit(RLIMIT_NOFILE, &lim));
    probe.recordErrno("setrlimit", setrlimit(RLIMIT_NOFILE, &lim));
    probe.record("bind", testing::bindLoopback(0));
    probe.recordErrno("listen", listen(sock, 1));
    probe.recordErrno("setuid", syscall(SYS_setuid, 0));
    probe.recordErrno("mount", mount("none", "/nonexistent", "tmpfs", 0, nullptr));
    io_uring_params params{};
    probe.recordErrno("io_uring_setup", syscall(SYS_io_uring_setup, 4, &params));
    probe.recordErrno("bpf", syscall(SYS_bpf, 0, nullptr, 0));
    probe.recordErrno("memfd_create", syscall(SYS_memfd_create, "x", 0));
    probe.record("open_file", testing::tryOpen("/etc/hostname", O_RDONLY));
    char random[8];
    probe.recordErrno("getrandom", syscall(SYS_getrandom, random, sizeof(random), 0));
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_CHILD_ERRNO(child, "ioctl_fionread", 0);
  EXPECT_CHILD_ERRNO(child, "ioctl_tiocgwinsz", EPERM);  // ENOTTY without the filter
  EXPECT_CHILD_ERRNO(child, "prctl_set_name", 0);
  EXPECT_CHILD_ERRNO(child, "prctl_dumpable", EPERM);
  EXPECT_CHILD_ERRNO(child, "tgkill_self", 0);
  EXPECT_CHILD_ERRNO(child, "tgkill_parent", EPERM);
  EXPECT_CHILD_ERRNO(child, "kill_parent", EPERM);
  EXPECT_CHILD_ERRNO(child, "getrlimit", 0);
  EXPECT_CHILD_ERRNO(child, "setrlimit", EPERM);
  EXPECT_CHILD_ERRNO(child, "bind", EPERM);
  EXPECT_CHILD_ERRNO(child, "listen", EPERM);
  EXPECT_CHILD_ERRNO(child, "setuid", EPERM);
  EXPECT_CHILD_ERRNO(child, "mount", EPERM);
  EXPECT_CHILD_ERRNO(child, "io_uring_setup", EPERM);
  EXPECT_CHILD_ERRNO(child, "bpf", EPERM);
  EXPECT_CHILD_ERRNO(child, "memfd_create", EPERM);
  EXPECT_CHILD_ERRNO(child, "open_file", 0);
  EXPECT_CHILD_ERRNO(child, "getrandom", 0);
}

TEST(SeccompFilterTest, KillActionKillsTheProcessWithSigsys) {
  SandboxPolicy policy;
  policy.seccompAction = SeccompAction::kKill;
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    SandboxReport report;
    common::Status st = applySeccomp(policy, report);
    if (!st.ok()) probe.fail(st.message());
    probe.record("before", 1);
    socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    probe.record("after", 1);
  });
  int status = child.finish();
  ASSERT_EQ(child.error(), "");
  EXPECT_EQ(child.value("before"), 1);
  EXPECT_EQ(child.value("after"), std::nullopt);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGSYS);
}

}  // namespace
}  // namespace scalws::sandbox
