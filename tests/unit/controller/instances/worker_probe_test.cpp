#include "controller/instances/worker_probe.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "controller/instances/instance_listeners.h"

namespace scalws::controller {
namespace {

using common::UniqueFd;

// An autobound, listening abstract socket of this process, and its hex name.
std::pair<UniqueFd, std::string> attachSocket() {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(sa_family_t)), 0);
  EXPECT_EQ(::listen(fd.get(), 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  std::string hex;
  size_t path_len = len - sizeof(sa_family_t);  // a NUL, then the name
  for (size_t k = 1; k < path_len; ++k) {
    char b[3];
    std::snprintf(b, sizeof(b), "%02x", static_cast<unsigned char>(addr.sun_path[k]));
    hex += b;
  }
  return {std::move(fd), hex};
}

TEST(WorkerProbeTest, StartTicksOfThisProcessAndOfNobody) {
  auto mine = processStartTicks(::getpid());
  ASSERT_TRUE(mine.ok()) << mine.status().message();
  EXPECT_GT(*mine, 0u);
  auto again = processStartTicks(::getpid());
  EXPECT_EQ(*again, *mine);
  pid_t child = ::fork();
  if (child == 0) _exit(0);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(processStartTicks(child).status().code(), common::StatusCode::kNotFound);
}

TEST(WorkerProbeTest, ThisTestIsNoWorker) {
  EXPECT_FALSE(runsWorkerOf(::getpid(), "demo"));
}

TEST(WorkerProbeTest, AttachSocketMustBeTheNamedProcesses) {
  auto [listener, hex] = attachSocket();
  ASSERT_FALSE(hex.empty());
  auto ok = connectAttachSocket(hex, ::getpid());
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  auto wrong = connectAttachSocket(hex, ::getpid() + 1);
  EXPECT_EQ(wrong.status().code(), common::StatusCode::kPermissionDenied);
  EXPECT_EQ(connectAttachSocket("zz", ::getpid()).status().code(),
            common::StatusCode::kInvalidArgument);
  EXPECT_FALSE(connectAttachSocket("00ffee", ::getpid()).ok());  // nobody there
}

TEST(WorkerProbeTest, CopyFdOfAChild) {
  // A child holding a listening TCP socket at a known fd number; we take a copy through
  // its pidfd, as a new controller does with a worker's listeners.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t child = ::fork();
  if (child == 0) {
    common::config::ListenConfig l;
    l.address = "127.0.0.1:0";
    l.host = "127.0.0.1";
    auto fd = bindListener(l);
    int n = fd.ok() ? fd->release() : -1;
    ssize_t w = ::write(pipe_fds[1], &n, sizeof(n));
    (void)w;
    ::pause();
    _exit(0);
  }
  int target = -1;
  ASSERT_EQ(::read(pipe_fds[0], &target, sizeof(target)), static_cast<ssize_t>(sizeof(target)));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ASSERT_GE(target, 0);
  auto pidfd = openPidfd(child);
  ASSERT_TRUE(pidfd.ok()) << pidfd.status().message();
  auto copy = copyFdOf(pidfd->get(), target);
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  EXPECT_NE(boundPort(copy->get()), 0);
  EXPECT_FALSE(copyFdOf(pidfd->get(), 999).ok());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace scalws::controller
