#include "worker/loop/poll_interest.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace scalws::worker {
namespace {

struct Fixture {
  uv_loop_t loop{};
  uv_poll_t poll{};
  int fds[2] = {-1, -1};
  PollInterest interest;
  int delivered = 0;  // events left after filter()
  int callbacks = 0;

  Fixture() {
    uv_loop_init(&loop);
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds);
    uv_poll_init(&loop, &poll, fds[0]);
    poll.data = this;
  }
  ~Fixture() {
    uv_close(reinterpret_cast<uv_handle_t*>(&poll), nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    close(fds[0]);
    close(fds[1]);
  }
  static void onPoll(uv_poll_t* handle, int status, int events) {
    auto* f = static_cast<Fixture*>(handle->data);
    ++f->callbacks;
    if (status < 0) return;
    f->delivered |= f->interest.filter(handle, events);
  }
  void want(int events) { interest.want(&poll, events, &Fixture::onPoll); }
  void turn() { uv_run(&loop, UV_RUN_NOWAIT); }
  bool active() const { return uv_is_active(reinterpret_cast<const uv_handle_t*>(&poll)); }
};

TEST(PollInterestTest, KeepsTheRegistrationWhileNothingIsWantedUntilAnEventComes) {
  Fixture f;
  f.want(UV_READABLE);
  ASSERT_EQ(write(f.fds[1], "a", 1), 1);
  f.turn();
  EXPECT_EQ(f.delivered, UV_READABLE);
  char c;
  ASSERT_EQ(read(f.fds[0], &c, 1), 1);

  // Nothing wanted: still registered, so wanting READABLE again costs nothing.
  f.want(0);
  EXPECT_TRUE(f.active());
  EXPECT_EQ(f.interest.wanted(), 0);
  f.want(UV_READABLE);
  EXPECT_TRUE(f.active());

  // Nothing wanted and the peer writes: the event is not handed on, and the poll stops.
  f.want(0);
  f.delivered = 0;
  ASSERT_EQ(write(f.fds[1], "b", 1), 1);
  f.turn();
  EXPECT_EQ(f.callbacks, 2);
  EXPECT_EQ(f.delivered, 0);
  EXPECT_FALSE(f.active());
  f.turn();
  EXPECT_EQ(f.callbacks, 2);  // level-triggered data still waiting wakes nobody now

  // Wanted again: the waiting byte is delivered.
  f.want(UV_READABLE);
  f.turn();
  EXPECT_EQ(f.delivered, UV_READABLE);
}

TEST(PollInterestTest, AChangedWantIsRegisteredAtOnce) {
  Fixture f;
  f.want(UV_READABLE | UV_WRITABLE);
  f.want(UV_READABLE);  // writable (always ready here) must not wake us any more
  f.turn();
  EXPECT_EQ(f.callbacks, 0);
  f.want(0);
  f.want(UV_WRITABLE);
  f.turn();
  EXPECT_EQ(f.delivered, UV_WRITABLE);
}

}  // namespace
}  // namespace scalws::worker
