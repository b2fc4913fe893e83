// One loop's side of a pool: share, wait queue, reuse, and dead idle connections, against a
// real unix socket on a real uv loop.
#include "worker/handlers/fastcgi/pool_state.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace scalws::worker::fastcgi {
namespace {

struct Waiter final : PoolWaiter {
  PoolConnection* got = nullptr;
  int unreachable = 0;
  void onPoolConnection(PoolConnection& c) noexcept override { got = &c; }
  void onPoolUnreachable(int err) noexcept override { unreachable = err; }
};

struct User : PoolConnectionUser {
  void onPoolConnected() noexcept override {}
  void onPoolConnectFailed(int) noexcept override {}
  void onPoolEvent(int, int) noexcept override {}
};

class PoolStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uv_loop_init(&uv_);
    poller_ = std::make_unique<SocketPoller>(&uv_);
    ASSERT_TRUE(poller_->start().ok());
    char tmpl[] = "/tmp/scalws-pool-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/fpm.sock";
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un sun{};
    sun.sun_family = AF_UNIX;
    std::strcpy(sun.sun_path, path_.c_str());
    ASSERT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&sun), sizeof(sun)), 0);
    ASSERT_EQ(listen(listen_fd_, 16), 0);
  }
  void TearDown() override {
    for (int fd : accepted_) close(fd);
    close(listen_fd_);
    poller_->close();  // frees the connections the pools released
    uv_run(&uv_, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&uv_), 0);
    std::system(("rm -rf " + dir_).c_str());
  }
  PoolSpec spec(bool keep, uint32_t share, uint32_t queue, const std::string& path) {
    common::config::PhpPoolConfig c;
    c.name = "main";
    c.address = "unix:" + path;
    c.unix_path = path;
    if (keep) c.max_conns = share;
    c.queue = queue;
    auto s = resolvePoolSpec(c, 1);
    EXPECT_TRUE(s.ok());
    return *s;
  }
  void acceptAll() {
    for (;;) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      accepted_.push_back(fd);
    }
  }
  void spin() {
    for (int i = 0; i < 5; ++i) uv_run(&uv_, UV_RUN_NOWAIT);
  }

  uv_loop_t uv_{};
  std::unique_ptr<SocketPoller> poller_;
  std::string dir_, path_;
  int listen_fd_ = -1;
  std::vector<int> accepted_;
};

TEST_F(PoolStateTest, KeepsAtMostItsShareAndQueuesTheRest) {
  PoolState pool(*poller_, spec(true, 2, 1, path_));
  Waiter w1, w2, w3, w4;
  User user;
  PoolConnection* c1 = nullptr;
  PoolConnection* c2 = nullptr;
  PoolConnection* none = nullptr;
  int err = 0;
  ASSERT_EQ(pool.acquire(w1, c1, err), PoolState::Acquire::kGot);
  ASSERT_EQ(pool.acquire(w2, c2, err), PoolState::Acquire::kGot);
  EXPECT_EQ(c1->state(), PoolConnection::State::kInUse);  // unix sockets connect at once
  EXPECT_EQ(pool.openCount(), 2u);
  EXPECT_EQ(pool.acquire(w3, none, err), PoolState::Acquire::kQueued);
  EXPECT_EQ(pool.acquire(w4, none, err), PoolState::Acquire::kQueueFull);
  EXPECT_EQ(pool.queuedCount(), 1u);

  c1->lend(&user);
  pool.release(*c1, true);  // straight to the waiter
  EXPECT_EQ(w3.got, c1);
  EXPECT_EQ(pool.queuedCount(), 0u);
  EXPECT_EQ(pool.idleCount(), 0u);
  EXPECT_EQ(c1->requestsServed(), 1u);

  pool.release(*c1, true);  // nobody waits: kept idle
  EXPECT_EQ(pool.idleCount(), 1u);
  PoolConnection* again = nullptr;
  ASSERT_EQ(pool.acquire(w4, again, err), PoolState::Acquire::kGot);
  EXPECT_EQ(again, c1);
  EXPECT_EQ(again->requestsServed(), 2u);

  pool.release(*again, false);  // not reusable: closed
  EXPECT_EQ(pool.openCount(), 1u);
  pool.release(*c2, true);
  pool.closeIdle();
  EXPECT_EQ(pool.openCount(), 0u);
  spin();
}

TEST_F(PoolStateTest, ClosedSlotGoesToTheFirstWaiterAndCancelLeavesTheQueue) {
  PoolState pool(*poller_, spec(true, 1, 4, path_));
  Waiter w1, w2, w3;
  PoolConnection* c = nullptr;
  PoolConnection* none = nullptr;
  int err = 0;
  ASSERT_EQ(pool.acquire(w1, c, err), PoolState::Acquire::kGot);
  ASSERT_EQ(pool.acquire(w2, none, err), PoolState::Acquire::kQueued);
  ASSERT_EQ(pool.acquire(w3, none, err), PoolState::Acquire::kQueued);
  pool.cancel(w2);
  pool.cancel(w2);  // twice is harmless
  EXPECT_EQ(pool.queuedCount(), 1u);
  pool.release(*c, false);  // closed; the freed slot opens a new connection for w3
  ASSERT_NE(w3.got, nullptr);
  EXPECT_EQ(w2.got, nullptr);
  EXPECT_EQ(pool.openCount(), 1u);
  pool.release(*w3.got, false);
  EXPECT_EQ(pool.openCount(), 0u);
  spin();
}

TEST_F(PoolStateTest, WithoutMaxConnsEveryRequestGetsItsOwnConnection) {
  PoolState pool(*poller_, spec(false, 0, 0, path_));
  std::vector<Waiter> waiters(5);
  std::vector<PoolConnection*> conns;
  int err = 0;
  for (auto& w : waiters) {
    PoolConnection* c = nullptr;
    ASSERT_EQ(pool.acquire(w, c, err), PoolState::Acquire::kGot);
    conns.push_back(c);
  }
  EXPECT_EQ(pool.openCount(), 5u);
  for (auto* c : conns) pool.release(*c, true);  // never kept
  EXPECT_EQ(pool.idleCount(), 0u);
  EXPECT_EQ(pool.openCount(), 0u);
  spin();
}

TEST_F(PoolStateTest, UnreachablePoolFailsAtOnce) {
  PoolState pool(*poller_, spec(true, 2, 4, dir_ + "/missing.sock"));
  Waiter w;
  PoolConnection* c = nullptr;
  int err = 0;
  EXPECT_EQ(pool.acquire(w, c, err), PoolState::Acquire::kFailed);
  EXPECT_EQ(err, ENOENT);
  EXPECT_EQ(pool.openCount(), 0u);
}

TEST_F(PoolStateTest, IdleConnectionClosedByThePoolIsDropped) {
  PoolState pool(*poller_, spec(true, 2, 4, path_));
  Waiter w;
  PoolConnection* c = nullptr;
  int err = 0;
  ASSERT_EQ(pool.acquire(w, c, err), PoolState::Acquire::kGot);
  pool.release(*c, true);
  EXPECT_EQ(pool.idleCount(), 1u);
  acceptAll();
  ASSERT_EQ(accepted_.size(), 1u);
  close(accepted_.back());  // PHP-FPM ends the kept connection
  accepted_.clear();
  spin();
  EXPECT_EQ(pool.idleCount(), 0u);
  EXPECT_EQ(pool.openCount(), 0u);
}

TEST_F(PoolStateTest, CountsConnectsReusesAndQueueWaits) {
  LoopCounters counters;
  PoolState pool(*poller_, spec(true, 1, 4, path_), &counters);
  Waiter w1, w2, w3;
  User user;
  PoolConnection* c = nullptr;
  PoolConnection* none = nullptr;
  int err = 0;
  ASSERT_EQ(pool.acquire(w1, c, err), PoolState::Acquire::kGot);
  ASSERT_EQ(pool.acquire(w2, none, err), PoolState::Acquire::kQueued);
  ASSERT_EQ(pool.acquire(w3, none, err), PoolState::Acquire::kQueued);
  EXPECT_EQ(counters.php_connects.value(), 1u);
  EXPECT_EQ(counters.php_waits.value(), 2u);
  EXPECT_EQ(counters.php_wait_us.value(), 0u);  // still waiting
  usleep(20'000);
  c->lend(&user);
  pool.release(*c, true);  // handed to w2: a reuse, and its wait ends
  ASSERT_EQ(w2.got, c);
  EXPECT_EQ(counters.php_reuses.value(), 1u);
  EXPECT_GE(counters.php_wait_us.value(), 20'000u);
  pool.cancel(w3);  // gave up: its wait counts too
  EXPECT_GE(counters.php_wait_us.value(), 40'000u);
  EXPECT_LT(counters.php_wait_us.value(), 10'000'000u);
  pool.release(*c, true);
  PoolConnection* again = nullptr;
  ASSERT_EQ(pool.acquire(w1, again, err), PoolState::Acquire::kGot);  // from idle
  EXPECT_EQ(counters.php_reuses.value(), 2u);
  EXPECT_EQ(counters.php_connects.value(), 1u);
  pool.release(*again, false);
  spin();
}

TEST(PoolShare, DividesMaxConnsAcrossLoops) {
  EXPECT_EQ(poolShare(8, 1), 8u);
  EXPECT_EQ(poolShare(8, 2), 4u);
  EXPECT_EQ(poolShare(8, 3), 2u);  // never more than max_conns in total
  EXPECT_EQ(poolShare(1, 4), 1u);  // but every loop can serve
  EXPECT_EQ(poolShare(5, 0), 5u);
}

TEST(PoolSpecResolve, TcpAndUnixAddresses) {
  common::config::PhpPoolConfig c;
  c.name = "p";
  c.kind = common::config::PhpPoolConfig::Kind::kTcp;
  c.host = "::1";
  c.port = 9000;
  auto s = resolvePoolSpec(c, 2);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->address.ss_family, AF_INET6);
  EXPECT_FALSE(s->keep_conn);
  c.host = "127.0.0.1";
  c.max_conns = 6;
  auto t = resolvePoolSpec(c, 2);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->address.ss_family, AF_INET);
  EXPECT_TRUE(t->keep_conn);
  EXPECT_EQ(t->share, 3u);
  EXPECT_FALSE(t->sameAddress(*s));
  c.host = "not-an-address";
  EXPECT_FALSE(resolvePoolSpec(c, 1).ok());
}

}  // namespace
}  // namespace scalws::worker::fastcgi
