#include "sandbox/sandbox.h"

#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "sandbox/landlock.h"
#include "sandbox/process_status.h"
#include "tests/support/try_socket.h"
#include "tests/unit/sandbox/forked_child.h"
#include "tests/unit/sandbox/sandbox_fixtures.h"

namespace scalws::sandbox {
namespace {

using testing::ChildProbe;
using testing::ForkedChild;
using testing::SandboxTree;

using ::scalws::testing::trySocket;

// The whole sandbox as a worker gets it: nobody, a docroot, a cache dir, a log file, one
// upstream port, mode "required".
class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (CI runs the unit tests as root)";
    abi_ = probeLandlockAbi();
    if (abi_ < 6) GTEST_SKIP() << "needs Landlock ABI 6, the kernel has " << abi_;
    SandboxInputs in;
    in.user = "nobody";
    in.docroots = {tree_.docroot()};
    in.writableDirs = {tree_.cacheDir()};
    in.logFiles = {tree_.logFile()};
    in.tcpConnectPorts = {upstream_.port()};
    in.mode = SandboxMode::kRequired;
    auto policy = buildSandboxPolicy(in);
    ASSERT_TRUE(policy.ok()) << policy.status().message();
    policy_ = *policy;
  }

  int abi_ = 0;
  SandboxTree tree_;
  testing::TcpListener upstream_;
  testing::TcpListener other_;
  SandboxPolicy policy_;
};

TEST_F(SandboxTest, WorkerCanServeAndNothingElse) {
  // Baseline without the sandbox: what the child will be refused works here.
  ASSERT_EQ(testing::connectLoopback(other_.port()), 0);
  ASSERT_EQ(trySocket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), 0);
  pid_t parent = getpid();

  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    // A UDP socket as an HTTP/3 listener holds one (maybe in a group other instances share).
    int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    auto report = applySandbox(policy_);
    if (!report.ok()) probe.fail(report.status().message());
    probe.note("report", report->toJson().dump());
    std::string lines;
    for (const std::string& l : report->toLines()) lines += l + " | ";
    probe.note("lines", lines);

    // What a worker does.
    char buf[64] = {};
    int fd = open((tree_.docroot() + "/index.html").c_str(), O_RDONLY | O_CLOEXEC);
    probe.recordErrno("read_docroot", fd >= 0 ? read(fd, buf, sizeof(buf)) : -1);
    probe.record("read_matches", std::string(buf) == SandboxTree::kIndexBody);
    int cacheFd = open((tree_.cacheDir() + "/entry").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    probe.recordErrno("write_cache", cacheFd >= 0 ? write(cacheFd, "x", 1) : -1);
    probe.record("append_log", testing::tryOpen(tree_.logFile(), O_WRONLY | O_APPEND));
    probe.record("connect_upstream", testing::connectLoopback(upstream_.port()));
    int fromThread = 0;
    std::thread t([&] { fromThread = 7; });
    t.join();
    probe.record("thread", fromThread);

    // What it must not do.
    probe.record("execve", testing::tryExec("/bin/true"));
    probe.record("read_outside", testing::tryOpen(tree_.secret(), O_RDONLY));
    probe.record("write_outside", testing::tryOpen(tree_.secret(), O_WRONLY));
    probe.record("create_outside", testing::tryOpen(tree_.outsideDir() + "/x", O_WRONLY | O_CREAT));
    probe.record("trunc_docroot",
                 testing::tryOpen(tree_.docroot() + "/index.html", O_RDONLY | O_TRUNC));
    probe.record("write_docroot", testing::tryOpen(tree_.docroot() + "/index.html", O_WRONLY));
    probe.record("trunc_log", testing::tryOpen(tree_.logFile(), O_WRONLY | O_TRUNC));
    probe.record("symlink_escape", testing::tryOpen(tree_.docroot() + "/link-to-secret", O_RDONLY));
    probe.record("connect_other", testing::connectLoopback(other_.port()));
    probe.record("bind", testing::bindLoopback(0));
    probe.record("socket_packet", trySocket(AF_PACKET, SOCK_RAW));
    probe.record("socket_netlink", trySocket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
    probe.record("socket_unix", trySocket(AF_UNIX, SOCK_STREAM));
    probe.record("fork", testing::tryFork());
    probe.recordErrno("kill_parent", kill(parent, 0));
    probe.recordErrno("setuid0", setuid(0));
    int one = 1;
    probe.recordErrno("udp_buffer", setsockopt(udp, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)));
    probe.recordErrno("udp_pktinfo", setsockopt(udp, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)));
    sock_filter everything_to_me[] = {{BPF_RET | BPF_K, 0, 0, 0}};
    sock_fprog program{1, everything_to_me};
    probe.recordErrno(
        "attach_reuseport_program",
        setsockopt(udp, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &program, sizeof(program)));
    probe.recordErrno("detach_reuseport_program",
                      setsockopt(udp, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &one, sizeof(one)));
    probe.waitForParent();
  });

  ASSERT_TRUE(child.waitReady()) << child.error();
  // The kernel's view from outside, as the supervisor and integration tests see a worker.
  auto status = readProcessStatusOf(child.pid());
  ASSERT_TRUE(status.ok()) << status.status().message();
  int exit = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(exit) && WEXITSTATUS(exit) == 0) << exit;

  EXPECT_EQ(status->seccompMode, 2);
  EXPECT_TRUE(status->noNewPrivs);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(status->uid[i], 65534u);
    EXPECT_EQ(status->gid[i], 65534u);
  }
  EXPECT_EQ(status->capEffective, 0u);
  EXPECT_EQ(status->capPermitted, 0u);

  std::cout << "sandbox report: " << child.text("lines") << "\n";
  nlohmann::json report = nlohmann::json::parse(child.text("report"), nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << child.text("report");
  EXPECT_EQ(report["verified"], true);
  EXPECT_EQ(report["identity"]["uid"], 65534);
  EXPECT_EQ(report["identity"]["changed"], true);
  EXPECT_EQ(report["no_new_privs"], true);
  EXPECT_EQ(report["landlock"]["abi"], abi_);
  EXPECT_EQ(report["landlock"]["enforced"], true);
  EXPECT_EQ(report["landlock"]["paths"].size(), 3u);
  EXPECT_EQ(report["landlock"]["tcp_connect_ports"], nlohmann::json({upstream_.port()}));
  EXPECT_EQ(report["seccomp"]["enforced"], true);
  EXPECT_EQ(report["seccomp"]["action"], "errno");

  EXPECT_CHILD_ERRNO(child, "read_docroot", 0);
  EXPECT_EQ(child.value("read_matches"), 1);
  EXPECT_CHILD_ERRNO(child, "write_cache", 0);
  EXPECT_CHILD_ERRNO(child, "append_log", 0);
  EXPECT_CHILD_ERRNO(child, "connect_upstream", 0);
  EXPECT_EQ(child.value("thread"), 7);

  EXPECT_CHILD_ERRNO(child, "execve", EPERM);  // seccomp, before Landlock's EACCES
  EXPECT_CHILD_ERRNO(child, "read_outside", EACCES);
  EXPECT_CHILD_ERRNO(child, "write_outside", EACCES);
  EXPECT_CHILD_ERRNO(child, "create_outside", EACCES);
  EXPECT_CHILD_ERRNO(child, "trunc_docroot", EACCES);
  EXPECT_CHILD_ERRNO(child, "write_docroot", EACCES);
  EXPECT_CHILD_ERRNO(child, "trunc_log", EACCES);
  EXPECT_CHILD_ERRNO(child, "symlink_escape", EACCES);
  EXPECT_CHILD_ERRNO(child, "connect_other", EACCES);
  EXPECT_CHILD_ERRNO(child, "bind", EPERM);  // not in the allow-list; Landlock would say EACCES
  EXPECT_CHILD_ERRNO(child, "socket_packet", EPERM);
  EXPECT_CHILD_ERRNO(child, "socket_netlink", EPERM);
  EXPECT_CHILD_ERRNO(child, "socket_unix", EPERM);
  EXPECT_CHILD_ERRNO(child, "fork", EPERM);
  EXPECT_CHILD_ERRNO(child, "kill_parent", EPERM);
  EXPECT_CHILD_ERRNO(child, "setuid0", EPERM);
  EXPECT_CHILD_ERRNO(child, "udp_buffer", 0);
  EXPECT_CHILD_ERRNO(child, "udp_pktinfo", 0);
  // A UDP group's program decides which process gets another tenant's datagrams.
  EXPECT_CHILD_ERRNO(child, "attach_reuseport_program", EPERM);
  EXPECT_CHILD_ERRNO(child, "detach_reuseport_program", EPERM);
}

TEST_F(SandboxTest, RefusedOnceThreadsRun) {
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread t([&] {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return done; });
    });
    auto report = applySandbox(policy_);
    probe.record("refused",
                 !report.ok() && report.status().code() == common::StatusCode::kFailedPrecondition);
    probe.record("uid", geteuid());  // refused before anything changed
    {
      std::lock_guard lock(m);
      done = true;
    }
    cv.notify_one();
    t.join();
  });
  child.finish();
  ASSERT_EQ(child.error(), "");
  EXPECT_EQ(child.value("refused"), 1);
  EXPECT_EQ(child.value("uid"), 0);
}

TEST_F(SandboxTest, OffModeOnlyDropsPrivileges) {
  policy_.mode = SandboxMode::kOff;
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    auto report = applySandbox(policy_);
    if (!report.ok()) probe.fail(report.status().message());
    probe.record("uid", geteuid());
    probe.record("verified", report->verified);
    probe.record("landlock", report->landlock.enforced);
    probe.record("seccomp", report->seccomp.enforced);
    probe.record("read_outside", testing::tryOpen(tree_.secret(), O_RDONLY));
    probe.record("fork", testing::tryFork());
  });
  int exit = child.finish();
  ASSERT_EQ(child.error(), "");
  ASSERT_TRUE(WIFEXITED(exit)) << exit;
  EXPECT_EQ(child.value("uid"), 65534);
  EXPECT_EQ(child.value("verified"), 1);
  EXPECT_EQ(child.value("landlock"), 0);
  EXPECT_EQ(child.value("seccomp"), 0);
  EXPECT_CHILD_ERRNO(child, "read_outside", 0);
  EXPECT_CHILD_ERRNO(child, "fork", 0);
}

}  // namespace
}  // namespace scalws::sandbox

namespace scalws::sandbox {
namespace {

// Regression: the rule paths were opened after the drop to nobody, so a config file in a
// directory only root may enter (mkdtemp makes 0700 directories) failed the whole sandbox.
TEST_F(SandboxTest, RulePathsOnlyRootCanReachStillWork) {
  char dir_template[] = "/tmp/scalws-root-only-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);  // 0700, owned by root
  std::string dir = dir_template;
  std::string file = dir + "/site.toml";
  int fd = open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  policy_.paths.push_back(PathRule{file, PathAccess::kReadOnly, PathKind::kFile});
  ForkedChild child = ForkedChild::start([&](ChildProbe& probe) {
    auto report = applySandbox(policy_);
    if (!report.ok()) probe.fail(report.status().message());
    probe.record("uid", geteuid());
    probe.record("landlock", report->landlock.enforced);
  });
  child.finish();
  unlink(file.c_str());
  rmdir(dir.c_str());
  ASSERT_EQ(child.error(), "");
  EXPECT_EQ(child.value("uid"), 65534);
  EXPECT_EQ(child.value("landlock"), 1);
}

}  // namespace
}  // namespace scalws::sandbox
