#include "worker/net/outbound_connect.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "tests/support/loopback_listener.h"

namespace scalws::worker {
namespace {

using ::scalws::testing::LoopbackListener;

int waitWritable(int fd) {
  pollfd p{fd, POLLOUT, 0};
  return ::poll(&p, 1, 5000) == 1 ? 0 : -1;
}

TEST(OutboundConnectTest, TcpConnectsNonBlockingWithNoDelay) {
  LoopbackListener listener;
  ConnectStart start = startConnect(listener.address, listener.len);
  ASSERT_GE(start.fd, 0) << std::strerror(start.err);
  if (!start.connected) {
    ASSERT_EQ(waitWritable(start.fd), 0);
    EXPECT_EQ(finishedConnectError(start.fd, 0), 0);
  }
  int one = 0;
  socklen_t len = sizeof(one);
  ASSERT_EQ(getsockopt(start.fd, IPPROTO_TCP, TCP_NODELAY, &one, &len), 0);
  EXPECT_EQ(one, 1);
  EXPECT_NE(fcntl(start.fd, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(fcntl(start.fd, F_GETFD) & FD_CLOEXEC, 0);
  ::close(start.fd);
}

TEST(OutboundConnectTest, RefusedTcpConnectIsReportedWhenItFinishes) {
  sockaddr_storage address{};
  socklen_t len = sizeof(sockaddr_in);
  {
    LoopbackListener gone;  // a port that was just free: nothing listens there afterwards
    address = gone.address;
  }
  ConnectStart start = startConnect(address, len);
  if (start.fd < 0) {
    EXPECT_EQ(start.err, ECONNREFUSED);  // loopback may refuse at once
    return;
  }
  ASSERT_FALSE(start.connected);
  ASSERT_EQ(waitWritable(start.fd), 0);
  EXPECT_EQ(finishedConnectError(start.fd, 0), ECONNREFUSED);
  ::close(start.fd);
}

TEST(OutboundConnectTest, UnixSocketConnectsAtOnceOrFails) {
  std::string path = "/tmp/scalws-outbound-" + std::to_string(::getpid()) + ".sock";
  sockaddr_storage address{};
  auto* un = reinterpret_cast<sockaddr_un*>(&address);
  un->sun_family = AF_UNIX;
  std::strncpy(un->sun_path, path.c_str(), sizeof(un->sun_path) - 1);
  socklen_t len = sizeof(sockaddr_un);

  ConnectStart missing = startConnect(address, len);
  EXPECT_EQ(missing.fd, -1);
  EXPECT_EQ(missing.err, ENOENT);

  int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ::unlink(path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), len), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  ConnectStart start = startConnect(address, len);
  ASSERT_GE(start.fd, 0) << std::strerror(start.err);
  EXPECT_TRUE(start.connected);
  ::close(start.fd);
  ::close(listener);
  ::unlink(path.c_str());
}

TEST(OutboundConnectTest, AFailedPollIsARefusal) {
  EXPECT_EQ(finishedConnectError(-1, -9), ECONNREFUSED);
}

}  // namespace
}  // namespace scalws::worker
