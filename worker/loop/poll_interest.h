// What a uv_poll_t is registered for, kept apart from what its owner currently wants.
// libuv's uv_poll_stop() is an epoll DEL and every uv_poll_start() a DEL and an ADD, so a
// connection that wants nothing for a moment (a request waiting on PHP or an upstream)
// keeps its registration, and drops it only when an event it no longer wants arrives:
// a kept-alive exchange then costs no epoll_ctl at all.
#pragma once

#include <uv.h>

namespace scalws::worker {

class PollInterest {
 public:
  // Asks for `events` (UV_READABLE | UV_WRITABLE, or 0). Registers at once unless the
  // registration already matches or nothing is wanted: so the registration is either what
  // is wanted or, while nothing is, what was wanted last.
  void want(uv_poll_t* poll, int events, uv_poll_cb cb) {
    wanted_ = events;
    if (events == registered_ || events == 0) return;
    registered_ = events;
    uv_poll_start(poll, events, cb);
  }

  // In the poll callback: the events to handle. An event that came while nothing was
  // wanted (the only time the registration differs from the want) stops the poll.
  int filter(uv_poll_t* poll, int events) {
    if (wanted_ != 0) return events;
    if (registered_ != 0) {
      registered_ = 0;
      uv_poll_stop(poll);
    }
    return 0;
  }

  int wanted() const { return wanted_; }

 private:
  int registered_ = 0;
  int wanted_ = 0;
};

}  // namespace scalws::worker
