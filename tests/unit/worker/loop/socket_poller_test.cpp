// The poller on a real uv loop with socket pairs: events in libuv's words, the lazy
// registration, errors, releases that take effect at once (or with the close) but free on
// a later turn, and the poller waiting itself with libuv's descriptor in its set.
#include "worker/loop/socket_poller.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace scalws::worker {
namespace {

using Event = std::pair<int, int>;  // (status, events)

struct Socket {
  SocketPoller::Watch watch;
  int fds[2] = {-1, -1};
  std::vector<Event> events;  // as delivered
  int closed = 0;
  // Run from the callback, to test what a callback may do.
  std::function<void()> on_event;

  Socket() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0); }
  ~Socket() {
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
  static void onEvent(void* owner, int status, int events) {
    auto* s = static_cast<Socket*>(owner);
    s->events.emplace_back(status, events);
    if (s->on_event) s->on_event();
  }
  static void onClosed(void* owner) { ++static_cast<Socket*>(owner)->closed; }
  // As a connection's closed callback: the descriptor goes with it.
  static void onClosedClosing(void* owner) {
    auto* s = static_cast<Socket*>(owner);
    ++s->closed;
    close(s->fds[0]);
    s->fds[0] = -1;
  }
  void peerWrites() { ASSERT_EQ(write(fds[1], "a", 1), 1); }
  void drain() {
    char buf[64];
    while (read(fds[0], buf, sizeof(buf)) > 0) {
    }
  }
};

// Whether some epoll set of this process holds `fd` (its fdinfo lists it as a tfd).
bool inAnEpollSet(int fd) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return false;
  bool found = false;
  while (dirent* entry = readdir(dir)) {
    std::string link(64, '\0');
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    ssize_t n = readlink(path.c_str(), link.data(), link.size());
    if (n <= 0 || link.compare(0, static_cast<size_t>(n), "anon_inode:[eventpoll]") != 0) continue;
    std::ifstream info(std::string("/proc/self/fdinfo/") + entry->d_name);
    for (std::string line; std::getline(info, line);) {
      int tfd = -1;
      if (std::sscanf(line.c_str(), "tfd: %d", &tfd) == 1 && tfd == fd) found = true;
    }
  }
  closedir(dir);
  return found;
}

class SocketPollerTest : public ::testing::Test {
 protected:
  SocketPollerTest() {
    uv_loop_init(&loop_);
    poller_ = std::make_unique<SocketPoller>(&loop_);
    EXPECT_TRUE(poller_->start().ok());
  }
  ~SocketPollerTest() override {
    poller_->close();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  void attach(Socket& s) { poller_->attach(s.watch, s.fds[0], &s, &Socket::onEvent); }
  void turn() { uv_run(&loop_, UV_RUN_NOWAIT); }

  uv_loop_t loop_{};
  std::unique_ptr<SocketPoller> poller_;
};

TEST_F(SocketPollerTest, DeliversWhatIsWantedInLibuvsWords) {
  Socket s;
  attach(s);
  turn();
  EXPECT_TRUE(s.events.empty());  // attached, nothing wanted: not even writable
  poller_->want(s.watch, UV_READABLE);
  turn();
  EXPECT_TRUE(s.events.empty());  // nothing to read yet
  s.peerWrites();
  turn();
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0], Event(0, UV_READABLE));
  s.drain();
  s.events.clear();
  poller_->want(s.watch, UV_READABLE | UV_WRITABLE);
  turn();
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0], Event(0, UV_WRITABLE));
  poller_->release(s.watch, &Socket::onClosed);
  turn();
  EXPECT_EQ(s.closed, 1);
}

TEST_F(SocketPollerTest, WantingNothingKeepsTheRegistrationUntilAnEventDropsIt) {
  Socket s;
  attach(s);
  poller_->want(s.watch, UV_READABLE);
  poller_->want(s.watch, 0);
  s.peerWrites();
  turn();  // the event finds nothing wanted: no callback, and the socket leaves the set
  turn();
  EXPECT_TRUE(s.events.empty());
  poller_->want(s.watch, UV_READABLE);  // registered again: the byte is still there
  turn();
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0], Event(0, UV_READABLE));
  poller_->release(s.watch, &Socket::onClosed);
  turn();
}

TEST_F(SocketPollerTest, AHangUpIsReportedAsWhatTheSocketWaitsFor) {
  Socket s;
  attach(s);
  poller_->want(s.watch, UV_READABLE);
  close(s.fds[1]);
  s.fds[1] = -1;
  turn();
  ASSERT_FALSE(s.events.empty());
  EXPECT_EQ(s.events[0], Event(0, UV_READABLE));
  poller_->release(s.watch, &Socket::onClosed);
  turn();
}

TEST_F(SocketPollerTest, ASocketErrorStopsTheWatchWithAnErrorStatus) {
  // A TCP reset is EPOLLERR: a listener on loopback, a client that is reset.
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int client = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  linger hard{1, 0};
  setsockopt(server, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  close(server);  // RST to the client
  Socket t;
  close(t.fds[0]);
  t.fds[0] = client;
  poller_->attach(t.watch, client, &t, &Socket::onEvent);
  poller_->want(t.watch, UV_READABLE);
  for (int i = 0; i < 10 && t.events.empty(); ++i) turn();
  ASSERT_FALSE(t.events.empty());
  EXPECT_EQ(t.events[0], Event(UV_EBADF, 0));
  t.events.clear();
  turn();
  EXPECT_TRUE(t.events.empty());  // out of the set: reported once
  poller_->release(t.watch, &Socket::onClosed);
  turn();
  EXPECT_EQ(t.closed, 1);
  close(listener);
}

TEST_F(SocketPollerTest, AReleaseInsideACallbackSilencesTheOtherAndFreesOnALaterTurn) {
  Socket a;
  Socket b;
  attach(a);
  attach(b);
  poller_->want(a.watch, UV_WRITABLE);
  poller_->want(b.watch, UV_WRITABLE);
  // Whichever comes first releases both; the other gets no event from the same batch, and
  // neither is told it closed inside the callback.
  bool released = false;
  auto releaseBoth = [&] {
    if (released) return;
    released = true;
    poller_->release(a.watch, &Socket::onClosed);
    poller_->release(b.watch, &Socket::onClosed);
    EXPECT_EQ(a.closed + b.closed, 0);
  };
  a.on_event = releaseBoth;
  b.on_event = releaseBoth;
  turn();
  EXPECT_EQ(a.events.size() + b.events.size(), 1u);
  turn();
  EXPECT_EQ(a.closed, 1);
  EXPECT_EQ(b.closed, 1);
}

TEST_F(SocketPollerTest, AReleaseForCloseLeavesTheSetToTheClose) {
  Socket released;
  Socket closing;
  attach(released);
  attach(closing);
  poller_->want(released.watch, UV_READABLE);
  poller_->want(closing.watch, UV_READABLE);
  ASSERT_TRUE(inAnEpollSet(released.fds[0]));
  ASSERT_TRUE(inAnEpollSet(closing.fds[0]));

  poller_->release(released.watch, &Socket::onClosed);
  EXPECT_FALSE(inAnEpollSet(released.fds[0]));  // a DEL at once
  int fd = closing.fds[0];
  poller_->releaseForClose(closing.watch, &Socket::onClosedClosing);
  EXPECT_TRUE(inAnEpollSet(fd));  // no DEL: the close takes it out
  closing.peerWrites();
  turn();
  EXPECT_TRUE(closing.events.empty());  // released: its events are dropped
  EXPECT_EQ(closing.closed, 1);
  EXPECT_EQ(released.closed, 1);
  EXPECT_FALSE(inAnEpollSet(fd));
}

TEST_F(SocketPollerTest, ARegistrationEpollRefusesIsAnErrorOnALaterTurn) {
  Socket s;
  // A regular file cannot be in an epoll set (EPERM).
  char path[] = "/tmp/socket_poller_testXXXXXX";
  int file = mkstemp(path);
  ASSERT_GE(file, 0);
  unlink(path);
  poller_->attach(s.watch, file, &s, &Socket::onEvent);
  poller_->want(s.watch, UV_READABLE);
  EXPECT_TRUE(s.events.empty());  // not from inside want()
  turn();
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0], Event(UV_EPERM, 0));
  poller_->release(s.watch, &Socket::onClosed);
  turn();
  EXPECT_EQ(s.closed, 1);
  close(file);
}

// Waiting: the poller's epoll_wait is the blocking call and libuv's descriptor is in it.
TEST_F(SocketPollerTest, WaitingDeliversSocketsAndSaysWhenLibuvHasEvents) {
  turn();  // libuv has polled our set once: taking over must take it out of libuv's
  ASSERT_TRUE(poller_->takeOverWait());
  EXPECT_TRUE(poller_->waiting());
  turn();  // what uv_loop_init queued joins libuv's set, as WorkerLoop::run starts
  Socket s;
  attach(s);
  poller_->want(s.watch, UV_READABLE);
  EXPECT_FALSE(poller_->wait(0));  // nothing anywhere
  EXPECT_TRUE(s.events.empty());
  s.peerWrites();
  EXPECT_FALSE(poller_->wait(1000));  // the socket's event, and libuv has none
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0], Event(0, UV_READABLE));
  s.drain();

  // A watcher started outside libuv's poll is not in its set yet: libuv needs a turn, at
  // once, and after it the watcher's events come through libuv's descriptor.
  Socket other;
  uv_poll_t libuv_watch{};
  int libuv_events = 0;
  libuv_watch.data = &libuv_events;
  uv_poll_init(&loop_, &libuv_watch, other.fds[0]);
  uv_poll_start(&libuv_watch, UV_READABLE, [](uv_poll_t* h, int, int) {
    ++*static_cast<int*>(h->data);
    uv_poll_stop(h);
  });
  EXPECT_TRUE(poller_->wait(5000));
  turn();
  EXPECT_FALSE(poller_->wait(0));
  other.peerWrites();
  EXPECT_TRUE(poller_->wait(5000));
  EXPECT_EQ(libuv_events, 0);
  turn();
  EXPECT_EQ(libuv_events, 1);
  uv_close(reinterpret_cast<uv_handle_t*>(&libuv_watch), nullptr);
  turn();

  // An async handle's wake-up is an event on libuv's descriptor: wait() returns at once
  // and says so, and libuv's own turn then runs the callback.
  uv_async_t async{};
  int woken = 0;
  async.data = &woken;
  uv_async_init(&loop_, &async, [](uv_async_t* a) { ++*static_cast<int*>(a->data); });
  turn();
  uv_async_send(&async);
  EXPECT_TRUE(poller_->wait(5000));
  EXPECT_EQ(woken, 0);
  turn();
  EXPECT_EQ(woken, 1);
  EXPECT_FALSE(poller_->wait(0));  // libuv's turn took its event

  // A release while waiting: out of the set at once, closed right after the batch.
  s.on_event = [&] { poller_->release(s.watch, &Socket::onClosed); };
  s.peerWrites();
  EXPECT_FALSE(poller_->wait(1000));
  EXPECT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.closed, 1);
  uv_close(reinterpret_cast<uv_handle_t*>(&async), nullptr);
  turn();
}

}  // namespace
}  // namespace scalws::worker
