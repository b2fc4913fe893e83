// The loop's accept and close paths, with a real listening socket on 127.0.0.1 and a fake
// protocol (loop/protocols.h) in place of HTTP/1.1, so no HTTP is involved.
#include "worker/loop/worker_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "common/config/config_loader.h"
#include "common/net/listen_socket.h"
#include "worker/config_snapshot.h"
#include "worker/net/client_connection.h"
#include "worker/net/shared_hosts.h"
#include "worker/net/transport.h"

namespace scalws::worker {
namespace {

int g_live = 0;
int g_started = 0;
int g_last_fd = -1;
const SharedHosts* g_last_hosts = nullptr;

// Stands for a protocol's connection: lives until the loop asks it to end.
class FakeConnection final : public ClientConnection {
 public:
  FakeConnection(WorkerLoop& loop, std::unique_ptr<Transport> transport)
      : loop_(loop), transport_(std::move(transport)) {
    ++g_live;
  }
  ~FakeConnection() override {
    ::close(transport_->fd());
    --g_live;
  }
  void beginShutdown() override { end(); }
  void forceClose() override { end(); }

 private:
  void end() {
    loop_.onConnectionClosed(this);
    delete this;
  }
  WorkerLoop& loop_;
  std::unique_ptr<Transport> transport_;
};

ClientConnection* startFake(WorkerLoop& loop, std::unique_ptr<Transport> transport,
                            const PeerInfo& peer) {
  EXPECT_EQ(peer.address.ss_family, AF_INET);
  ++g_started;
  g_last_fd = transport->fd();
  g_last_hosts = peer.shared_hosts.get();
  return new FakeConnection(loop, std::move(transport));
}

int g_datagram_fd = -1;
uint16_t g_datagram_steering = 0;

// Stands for HTTP/3: takes a UDP socket, starts nothing the loop would have to end.
bool startFakeDatagrams(WorkerLoop&, const ListenerSocket& socket) {
  g_datagram_fd = socket.fd;
  g_datagram_steering = socket.steering_id;
  return true;
}

ClientConnection* refuseToStart(WorkerLoop&, std::unique_ptr<Transport>, const PeerInfo&) {
  return nullptr;
}

std::shared_ptr<const ConfigSnapshot> snapshot(const std::string& server) {
  std::string toml = "[server]\n" + server +
                     "\n[[listen]]\naddress = \"127.0.0.1:1\"\n"
                     "[[route]]\nrespond = { body = \"x\" }\n";
  auto config = common::config::loadSiteConfigString(toml, "test.toml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  auto snap = ConfigSnapshot::build(std::move(config).value());
  EXPECT_TRUE(snap.ok()) << snap.status().message();
  return std::move(snap).value();
}

class WorkerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_live = g_started = 0;
    g_last_fd = -1;
    g_last_hosts = nullptr;
    g_datagram_fd = -1;
    g_datagram_steering = 0;
    ASSERT_EQ(uv_loop_init(&uv_), 0);
    common::config::ListenConfig listen;
    listen.address = "127.0.0.1:0";
    listen.host = "127.0.0.1";
    auto fd = common::net::openListenSocket(listen);
    ASSERT_TRUE(fd.ok()) << fd.status().message();
    listen_fd_ = std::move(fd).value();
    sockaddr_in a{};
    socklen_t len = sizeof(a);
    getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  void TearDown() override { EXPECT_EQ(uv_loop_close(&uv_), 0); }

  void make(const std::string& server, const ProtocolTable& protocols) {
    loop_ = std::make_unique<WorkerLoop>(&uv_, 0, snapshot(server), -1);
    loop_->setProtocolsForTest(protocols);
    loop_->addListener(ListenerSocket{listen_fd_.get(), port_, false, -1});
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
  // Turns the loop until `done` holds (or a few seconds passed).
  bool runUntil(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      uv_run(&uv_, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done();
  }
  void shutdownLoop() {
    bool drained = false;
    loop_->setOnDrained([&] { drained = true; });
    loop_->postShutdown();
    loop_->run();  // returns once every handle of the loop is closed
    EXPECT_TRUE(drained);
    loop_.reset();
  }

  uv_loop_t uv_;
  common::UniqueFd listen_fd_;
  uint16_t port_ = 0;
  std::unique_ptr<WorkerLoop> loop_;
};

TEST_F(WorkerLoopTest, AcceptsAndStartsTheProtocolsConnection) {
  static const ProtocolTable fake{&startFake, &startFake};
  make("", fake);
  int a = connect();
  int b = connect();
  ASSERT_TRUE(runUntil([] { return g_started == 2; }));
  EXPECT_EQ(loop_->connectionCount(), 2u);
  EXPECT_EQ(loop_->siteMetrics().conn_accepted, 2u);
  EXPECT_EQ(loop_->siteMetrics().conn_active, 2u);
  // Set once on the listener, inherited by what it accepts.
  int nodelay = 0;
  socklen_t len = sizeof(nodelay);
  ASSERT_EQ(getsockopt(g_last_fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
  EXPECT_EQ(nodelay, 1);
  shutdownLoop();
  EXPECT_EQ(g_live, 0);
  ::close(a);
  ::close(b);
}

TEST_F(WorkerLoopTest, EveryWaitForEventsStartsANewTurn) {
  static const ProtocolTable fake{&startFake, &startFake};
  make("", fake);
  uint64_t first = loop_->turn();
  EXPECT_GE(first, 1u);  // 0 means "no turn" to the open-file cache
  uv_run(&uv_, UV_RUN_NOWAIT);
  uint64_t second = loop_->turn();
  EXPECT_EQ(second, first + 1);
  uv_run(&uv_, UV_RUN_NOWAIT);
  uv_run(&uv_, UV_RUN_NOWAIT);
  EXPECT_EQ(loop_->turn(), second + 2);
  shutdownLoop();
}

TEST_F(WorkerLoopTest, ShutdownEndsConnectionsAndStopsAccepting) {
  static const ProtocolTable fake{&startFake, &startFake};
  make("", fake);
  int a = connect();
  ASSERT_TRUE(runUntil([] { return g_started == 1; }));
  shutdownLoop();
  EXPECT_EQ(g_live, 0);
  // The connection's fd was closed: the client reads EOF.
  char c;
  EXPECT_EQ(::recv(a, &c, 1, 0), 0);
  ::close(a);
}

TEST_F(WorkerLoopTest, AConnectionThatCannotStartIsClosedAndCounted) {
  static const ProtocolTable refusing{&refuseToStart, &refuseToStart};
  make("", refusing);
  int a = connect();
  ASSERT_TRUE(runUntil([this] { return loop_->siteMetrics().conn_closed == 1; }));
  EXPECT_EQ(loop_->connectionCount(), 0u);
  char c;
  EXPECT_EQ(::recv(a, &c, 1, 0), 0);
  ::close(a);
  shutdownLoop();
}

TEST_F(WorkerLoopTest, OverMaxConnectionsGets503) {
  static const ProtocolTable fake{&startFake, &startFake};
  make("max_connections = 1", fake);
  int a = connect();
  ASSERT_TRUE(runUntil([] { return g_started == 1; }));
  int b = connect();
  std::string got;
  ASSERT_TRUE(runUntil([&] {
    char buf[256];
    ssize_t n = ::recv(b, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) got.append(buf, static_cast<size_t>(n));
    return got.find("\r\n\r\n") != std::string::npos;
  }));
  EXPECT_EQ(got.rfind("HTTP/1.1 503 ", 0), 0u) << got;
  EXPECT_EQ(g_started, 1);
  shutdownLoop();
  ::close(a);
  ::close(b);
}

// An HTTP/3 listener's UDP socket is not accepted on: the loop hands it to the table's
// datagram starter, and with none (a build without HTTP/3) it only logs and goes on.
TEST_F(WorkerLoopTest, AQuicSocketGoesToTheDatagramStarter) {
  static const ProtocolTable with_http3{&startFake, &startFake, &startFakeDatagrams};
  make("", with_http3);
  ListenerSocket udp;
  udp.fd = 12345;  // never read: the fake starter only records it
  udp.port = port_;
  udp.listen_index = 0;
  udp.quic = true;
  udp.steering_id = 3;
  loop_->addListener(udp);
  EXPECT_EQ(g_datagram_fd, 12345);
  EXPECT_EQ(g_datagram_steering, 3);
  // The TCP listener still accepts, and the UDP one added no connection.
  int a = connect();
  ASSERT_TRUE(runUntil([] { return g_started == 1; }));
  EXPECT_EQ(loop_->connectionCount(), 1u);
  shutdownLoop();
  ::close(a);
}

TEST_F(WorkerLoopTest, AQuicSocketWithoutHttp3IsLeftAlone) {
  static const ProtocolTable no_http3{&startFake, &startFake};
  make("", no_http3);
  ListenerSocket udp;
  udp.fd = 12345;
  udp.listen_index = 0;
  udp.quic = true;
  loop_->addListener(udp);
  EXPECT_EQ(g_datagram_fd, -1);
  EXPECT_EQ(loop_->connectionCount(), 0u);
  shutdownLoop();
}

// A shared address's channel: what a front sends is served like an accepted connection,
// with the address's names; what is not a TCP connection is closed, never served.
TEST_F(WorkerLoopTest, AHandedOverConnectionIsServedLikeAnAcceptedOne) {
  static const ProtocolTable fake{&startFake, &startFake};
  loop_ = std::make_unique<WorkerLoop>(&uv_, 0, snapshot(""), -1);
  loop_->setProtocolsForTest(fake);
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair), 0);
  common::UniqueFd front(pair[0]);
  common::UniqueFd channel(pair[1]);
  ListenerSocket handoff{channel.get(), port_, false, 0};
  handoff.handoff = true;
  handoff.shared_hosts = SharedHosts::build({"127.0.0.1:1", 1, {"a.example"}, {}, {}});
  loop_->addListener(handoff);

  auto send = [&](int fd) {
    char byte = 'C';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    EXPECT_EQ(::sendmsg(front.get(), &msg, 0), 1);
  };
  // What a front does: accept, hand over, close its copy.
  int client = connect();
  int accepted = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  ASSERT_GE(accepted, 0);
  send(accepted);
  ::close(accepted);
  ASSERT_TRUE(runUntil([] { return g_started == 1; }));
  ASSERT_NE(g_last_hosts, nullptr);
  EXPECT_TRUE(g_last_hosts->serves("a.example"));
  EXPECT_FALSE(g_last_hosts->serves("b.example"));
  EXPECT_EQ(loop_->siteMetrics().conn_accepted, 1u);
  // A descriptor that is no connection (a pipe) is closed, not served.
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  send(pipe_fds[0]);
  ::close(pipe_fds[0]);
  int second = connect();
  accepted = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  send(accepted);
  ::close(accepted);
  ASSERT_TRUE(runUntil([] { return g_started == 2; }));
  EXPECT_EQ(loop_->siteMetrics().conn_accepted, 2u);  // the pipe was not counted
  ::close(pipe_fds[1]);
  // New names reach the channel's next connections.
  loop_->postSharedHosts(0, SharedHosts::build({"127.0.0.1:1", 1, {"b.example"}, {}, {}}));
  // (the loop takes them on its next turn: they come from another thread in a worker)
  uv_run(&uv_, UV_RUN_NOWAIT);
  int third = connect();
  accepted = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  send(accepted);
  ::close(accepted);
  ASSERT_TRUE(runUntil([] { return g_started == 3; }));
  EXPECT_TRUE(g_last_hosts->serves("b.example"));
  shutdownLoop();
  ::close(client);
  ::close(second);
  ::close(third);
}

}  // namespace
}  // namespace scalws::worker
