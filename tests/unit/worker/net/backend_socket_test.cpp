#include "worker/net/backend_socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "tests/support/loopback_listener.h"

namespace scalws::worker {
namespace {

using ::scalws::testing::LoopbackListener;

// A connection as the handlers keep one: the socket a member, found from the poller's
// callbacks as their owner.
struct BackendTestConnection {
  BackendSocket socket;
  int polls = 0;
  int last_status = 0;
  int last_events = 0;
  int connect_result = -1;
  bool closed = false;
  int fd_at_close = -1;

  static void onPoll(void* owner, int status, int events) {
    auto* c = static_cast<BackendTestConnection*>(owner);
    ++c->polls;
    c->last_status = status;
    c->last_events = events;
    c->connect_result = c->socket.connectResult(status);
    c->socket.watch(false, false);
  }
  static void onClosed(void* owner) {
    auto* c = static_cast<BackendTestConnection*>(owner);
    c->fd_at_close = c->socket.fd();
    c->socket.closeFd();
    c->closed = true;
  }
};

class BackendSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    poller_ = std::make_unique<SocketPoller>(&loop_);
    ASSERT_TRUE(poller_->start().ok());
  }
  void TearDown() override {
    poller_->close();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  int connect(BackendTestConnection& c, const sockaddr_storage& address, socklen_t len) {
    return c.socket.connect(*poller_, address, len, &c, &BackendTestConnection::onPoll);
  }
  // Runs the loop until `done` or a bounded number of turns.
  template <class Done>
  void runUntil(Done done) {
    for (int i = 0; i < 1000 && !done(); ++i) uv_run(&loop_, UV_RUN_ONCE);
  }

  uv_loop_t loop_{};
  std::unique_ptr<SocketPoller> poller_;
};

TEST_F(BackendSocketTest, ConnectsAndReportsWritableThroughTheOwnersCallback) {
  LoopbackListener listener;
  BackendTestConnection c;
  ASSERT_EQ(connect(c, listener.address, listener.len), 0);
  ASSERT_GE(c.socket.fd(), 0);
  EXPECT_NE(fcntl(c.socket.fd(), F_GETFL) & O_NONBLOCK, 0);
  c.socket.watch(false, true);
  runUntil([&] { return c.polls > 0; });
  ASSERT_EQ(c.polls, 1);
  EXPECT_EQ(c.last_status, 0);
  EXPECT_NE(c.last_events & UV_WRITABLE, 0);
  EXPECT_EQ(c.connect_result, 0);

  int fd = c.socket.fd();
  c.socket.close(&BackendTestConnection::onClosed);
  runUntil([&] { return c.closed; });
  ASSERT_TRUE(c.closed);
  EXPECT_EQ(c.fd_at_close, fd);  // the fd outlives the watch until the poller let go of it
  EXPECT_EQ(c.socket.fd(), -1);
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
}

TEST_F(BackendSocketTest, RefusedConnectIsAnErrnoAtOnceOrWhenItFinishes) {
  sockaddr_storage address{};
  socklen_t len = sizeof(sockaddr_in);
  {
    LoopbackListener gone;  // a port that was just free: nothing listens there afterwards
    address = gone.address;
  }
  BackendTestConnection c;
  int err = connect(c, address, len);
  if (err != 0) {
    EXPECT_EQ(err, ECONNREFUSED);  // loopback may refuse at once; nothing is left open
    EXPECT_EQ(c.socket.fd(), -1);
    return;
  }
  EXPECT_FALSE(c.socket.connectedAtOnce());
  c.socket.watch(false, true);
  runUntil([&] { return c.polls > 0; });
  ASSERT_EQ(c.polls, 1);
  EXPECT_EQ(c.connect_result, ECONNREFUSED);
  c.socket.close(&BackendTestConnection::onClosed);
  runUntil([&] { return c.closed; });
  EXPECT_TRUE(c.closed);
}

TEST_F(BackendSocketTest, AnEventNobodyWantsIsDropped) {
  LoopbackListener listener;
  BackendTestConnection c;
  ASSERT_EQ(connect(c, listener.address, listener.len), 0);
  c.socket.watch(false, true);
  runUntil([&] { return c.polls > 0; });
  ASSERT_EQ(c.polls, 1);
  // Wanting nothing keeps the registration (writable still fires once): the poller drops
  // that event with the registration, so the owner hears nothing more.
  for (int i = 0; i < 5; ++i) uv_run(&loop_, UV_RUN_NOWAIT);
  EXPECT_EQ(c.polls, 1);
  c.socket.close(&BackendTestConnection::onClosed);
  runUntil([&] { return c.closed; });
  EXPECT_TRUE(c.closed);
}

}  // namespace
}  // namespace scalws::worker
