// FrontLoop with a real listener on 127.0.0.1 and socketpair channels standing for worker
// loops: the hand-off (the client's own connection reaches the "worker", nothing of it
// consumed), round-robin, refusals, and connections that wait for their first bytes.
#include "front/front_loop.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "common/net/listen_socket.h"
#include "tests/unit/front/route_with_channels.h"

namespace scalws::front {
namespace {

class FrontLoopTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(uv_loop_init(&uv_), 0); }
  void TearDown() override {
    if (front_) {
      front_->closeNow();
      uv_run(&uv_, UV_RUN_NOWAIT);
      front_.reset();
    }
    EXPECT_EQ(uv_loop_close(&uv_), 0);
  }

  void start(bool tls, uint64_t header_timeout_ms = 10'000, uint32_t max_waiting = 64) {
    common::config::ListenConfig listen;
    listen.address = "127.0.0.1:0";
    listen.host = "127.0.0.1";
    auto fd = common::net::openListenSocket(listen);
    ASSERT_TRUE(fd.ok()) << fd.status().message();
    sockaddr_in a{};
    socklen_t len = sizeof(a);
    ::getsockname(fd->get(), reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ipc::FrontSettings settings;
    settings.address = "127.0.0.1:0";
    settings.tls = tls;
    settings.header_timeout_ms = header_timeout_ms;
    settings.max_waiting = max_waiting;
    settings.user = "nobody";
    auto made = FrontLoop::create(&uv_, settings, std::move(fd).value());
    ASSERT_TRUE(made.ok()) << made.status().message();
    front_ = std::move(made).value();
    front_->start();
  }

  // An instance with `channels` worker loops; returns the worker ends.
  std::vector<common::UniqueFd> route(const std::string& instance, std::vector<std::string> names,
                                      bool is_default, uint32_t channels) {
    test::RouteWithChannels r =
        test::routeWithChannels(instance, std::move(names), is_default, channels);
    front_->setRoutes(RouteTable::with(front_->routes(), r.route));
    return std::move(r.workers);
  }

  int connect() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  }

  // Turns the loop until `done` holds (called once per turn: it may take what it checks).
  bool runUntil(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      uv_run(&uv_, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  // A descriptor a channel received, or -1.
  static int received(int worker_end) {
    char byte;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    if (::recvmsg(worker_end, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1) return -1;
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
    return fd;
  }

  // What the peer sent until it closed (an end of stream or a reset).
  std::string readAll(int fd) {
    std::string out;
    char buf[4096];
    runUntil([&] {
      ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) out.append(buf, static_cast<size_t>(n));
      return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
    });
    return out;
  }

  uv_loop_t uv_;
  uint16_t port_ = 0;
  std::unique_ptr<FrontLoop> front_;
};

TEST_F(FrontLoopTest, AConnectionReachesItsInstanceWithNothingConsumed) {
  start(false);
  auto shop = route("shop", {"shop.example"}, false, 1);
  auto home = route("home", {}, true, 1);
  int client = connect();
  std::string head = "GET / HTTP/1.1\r\nHost: shop.example\r\n\r\n";
  ASSERT_EQ(::send(client, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
  int fd = -1;
  ASSERT_TRUE(runUntil([&] { return (fd = received(shop[0].get())) >= 0; }));
  EXPECT_EQ(received(home[0].get()), -1);
  // The worker reads the whole head, and what it writes reaches the client.
  char buf[256];
  ASSERT_TRUE(runUntil([&] {
    return ::recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT) ==
           static_cast<ssize_t>(head.size());
  }));
  ASSERT_EQ(::recv(fd, buf, sizeof(buf), 0), static_cast<ssize_t>(head.size()));
  EXPECT_EQ(std::string(buf, head.size()), head);
  ASSERT_EQ(::send(fd, "hello", 5, 0), 5);
  ::close(fd);
  EXPECT_EQ(readAll(client), "hello");
  ::close(client);
  EXPECT_EQ(front_->counters().handed_off, 1u);
  EXPECT_EQ(front_->handoffs().at("shop"), 1u);
}

TEST_F(FrontLoopTest, ConnectionsAreSpreadOverAnInstancesWorkerLoops) {
  start(false);
  auto blog = route("blog", {"blog.example"}, false, 3);
  std::vector<int> clients;
  for (int i = 0; i < 6; ++i) {
    int c = connect();
    ::send(c, "GET / HTTP/1.1\r\nHost: blog.example\r\n\r\n", 38, 0);
    clients.push_back(c);
  }
  ASSERT_TRUE(runUntil([&] { return front_->counters().handed_off == 6; }));
  for (auto& worker : blog) {
    int first = received(worker.get());
    int second = received(worker.get());
    EXPECT_GE(first, 0);
    EXPECT_GE(second, 0);
    EXPECT_EQ(received(worker.get()), -1);
    ::close(first);
    ::close(second);
  }
  for (int c : clients) ::close(c);
}

TEST_F(FrontLoopTest, AFullWorkerQueueIsSkippedForTheNextOne) {
  start(false);
  auto blog = route("blog", {"blog.example"}, false, 2);
  // The first loop's queue is full: shrink what it may hold and fill it.
  int tiny = 1;
  auto r = front_->routes().find("blog.example");
  ASSERT_NE(r, nullptr);
  ::setsockopt(r->channels[0].get(), SOL_SOCKET, SO_SNDBUF, &tiny, sizeof(tiny));
  int filled = 0;
  while (::send(r->channels[0].get(), "x", 1, MSG_DONTWAIT) == 1) ++filled;
  ASSERT_GT(filled, 0);
  for (int i = 0; i < 3; ++i) {
    int c = connect();
    ::send(c, "GET / HTTP/1.1\r\nHost: blog.example\r\n\r\n", 38, 0);
    ASSERT_TRUE(
        runUntil([&] { return front_->counters().handed_off == static_cast<uint64_t>(i + 1); }));
    int fd = received(blog[1].get());
    EXPECT_GE(fd, 0);
    ::close(fd);
    ::close(c);
  }
}

TEST_F(FrontLoopTest, RefusalsAnswerInTheClientsProtocol) {
  start(false);
  auto blog = route("blog", {"blog.example"}, false, 1);
  route("stopped", {"stopped.example"}, false, 0);
  auto ask = [&](const std::string& bytes) {
    int c = connect();
    ::send(c, bytes.data(), bytes.size(), 0);
    std::string answer = readAll(c);
    ::close(c);
    return answer;
  };
  EXPECT_EQ(ask("GET / HTTP/1.1\r\nHost: nobody.example\r\n\r\n").rfind("HTTP/1.1 421 ", 0), 0u);
  EXPECT_EQ(ask("GET / HTTP/1.1\r\nHost: stopped.example\r\n\r\n").rfind("HTTP/1.1 503 ", 0), 0u);
  EXPECT_EQ(ask("\x16\x03\x01\x00\x05hello").rfind("HTTP/1.1 400 ", 0), 0u);
  EXPECT_EQ(ask("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), "");  // h2c without a default
  const ipc::FrontCounters& c = front_->counters();
  EXPECT_EQ(c.unknown_name, 1u);
  EXPECT_EQ(c.unavailable, 1u);
  EXPECT_EQ(c.invalid, 1u);
  EXPECT_EQ(c.h2c_refused, 1u);
  EXPECT_EQ(c.handed_off, 0u);
}

TEST_F(FrontLoopTest, AnUnknownServerNameGetsTheTlsAlert) {
  start(true);
  route("blog", {"blog.example"}, false, 1);
  int c = connect();
  // A minimal ClientHello naming nobody.example (TLS 1.2 shape, one suite, no other
  // extension).
  std::string name = "nobody.example";
  std::string sni = std::string("\x00\x00", 2) + static_cast<char>(0) +
                    static_cast<char>(name.size() + 5) + static_cast<char>(0) +
                    static_cast<char>(name.size() + 3) + std::string(1, '\0') +
                    static_cast<char>(0) + static_cast<char>(name.size()) + name;
  std::string body = std::string("\x03\x03", 2) + std::string(32, 'r') + std::string(1, '\0') +
                     std::string("\x00\x02\x13\x01\x01\x00", 6) + static_cast<char>(0) +
                     static_cast<char>(sni.size()) + sni;
  std::string hello = std::string("\x01\x00", 2) + static_cast<char>(body.size() >> 8) +
                      static_cast<char>(body.size() & 0xff) + body;
  std::string record = std::string("\x16\x03\x01", 3) + static_cast<char>(hello.size() >> 8) +
                       static_cast<char>(hello.size() & 0xff) + hello;
  ::send(c, record.data(), record.size(), 0);
  // A fatal unrecognized_name alert (RFC 6066 §3), then the close.
  EXPECT_EQ(readAll(c), std::string("\x15\x03\x03\x00\x02\x02\x70", 7));
  ::close(c);
  EXPECT_EQ(front_->counters().unknown_name, 1u);
}

TEST_F(FrontLoopTest, AHeadThatComesInPiecesWaitsThenGoesOver) {
  start(false);
  auto blog = route("blog", {"blog.example"}, false, 1);
  int c = connect();
  ::send(c, "GET / HTTP/1.1\r\nHo", 18, 0);
  ASSERT_TRUE(runUntil([&] { return front_->counters().waiting == 1; }));
  EXPECT_EQ(received(blog[0].get()), -1);
  ::send(c, "st: blog.exa", 12, 0);
  uv_run(&uv_, UV_RUN_NOWAIT);
  ::send(c, "mple\r\n\r\n", 8, 0);
  int fd = -1;
  ASSERT_TRUE(runUntil([&] { return (fd = received(blog[0].get())) >= 0; }));
  EXPECT_EQ(front_->counters().waiting, 0u);
  ::close(fd);
  ::close(c);
}

TEST_F(FrontLoopTest, WaitingIsBoundedTheOldestMakesRoom) {
  start(false, 10'000, 2);
  route("blog", {"blog.example"}, false, 1);
  int a = connect();
  ::send(a, "G", 1, 0);
  ASSERT_TRUE(runUntil([&] { return front_->counters().waiting == 1; }));
  int b = connect();
  ::send(b, "G", 1, 0);
  ASSERT_TRUE(runUntil([&] { return front_->counters().waiting == 2; }));
  int c = connect();
  ::send(c, "G", 1, 0);
  ASSERT_TRUE(runUntil([&] { return front_->counters().evicted == 1; }));
  EXPECT_EQ(readAll(a), "");  // the oldest was closed
  EXPECT_EQ(front_->counters().waiting, 2u);
  ::close(a);
  ::close(b);
  ::close(c);
}

TEST_F(FrontLoopTest, SilenceEndsAtTheHeaderTimeout) {
  start(false, 50);
  route("blog", {"blog.example"}, false, 1);
  int c = connect();
  ::send(c, "GET / HTTP/1.1\r\n", 16, 0);
  ASSERT_TRUE(runUntil([&] { return front_->counters().peek_timeouts == 1; }));
  EXPECT_EQ(readAll(c), "");
  EXPECT_EQ(front_->counters().waiting, 0u);
  ::close(c);
}

TEST_F(FrontLoopTest, DrainingStopsAcceptingAndEndsOnceNothingWaits) {
  start(false);
  auto blog = route("blog", {"blog.example"}, false, 1);
  int c = connect();
  ::send(c, "GET / HTTP/1.1\r\n", 16, 0);
  ASSERT_TRUE(runUntil([&] { return front_->counters().waiting == 1; }));
  bool drained = false;
  front_->drain([&] { drained = true; });
  EXPECT_FALSE(drained);
  ::send(c, "Host: blog.example\r\n\r\n", 22, 0);
  ASSERT_TRUE(runUntil([&] { return drained; }));
  int fd = received(blog[0].get());
  EXPECT_GE(fd, 0);
  ::close(fd);
  ::close(c);
}

}  // namespace
}  // namespace scalws::front
