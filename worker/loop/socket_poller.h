// SocketPoller: the loop's listening and client sockets and the sockets handlers keep to
// upstreams and PHP pools, in an epoll set of the loop's own. A uv_poll_t costs six system calls
// per connection before any byte moves (a trial ADD and DEL and a FIONBIO in uv_poll_init, a DEL
// before the first start, the ADD, and the DEL at close), about 1 µs each on a virtual machine;
// here a connection costs one ADD (and a DEL only when its descriptor may outlive its close,
// releaseForClose), and changing what it waits for one MOD.
//
// A Watch is registered lazily: wanting nothing keeps the registration (an epoll DEL and a
// later ADD would cost two calls) until an event comes, which is then dropped along with
// the registration, so a kept-alive request waiting on a handler, or a kept upstream
// connection between two requests, costs no epoll_ctl. Callbacks get libuv's words:
// UV_READABLE | UV_WRITABLE, and a status below 0 (UV_EBADF, as libuv's poll) when the
// socket has an error; then the watch is out of the set.
//
// release() takes the watch out of the set at once; its on_closed runs on a later turn of
// the loop, never inside a callback, so the owner may free itself there (libuv's uv_close
// contract). A registration epoll refuses (ENOMEM, ENOSPC) is reported the same deferred
// way, as a callback with the error status.
//
// Two ways to be waited on. Watched: libuv's epoll set holds ours as one descriptor, and
// every loop wake with socket events costs two epoll_waits (libuv's, then ours). Waiting
// (WorkerLoop::run, after takeOverWait): the other way round, libuv's backend descriptor
// joins our set and the loop's one blocking call is our epoll_wait; libuv gets a turn
// (uv_run with UV_RUN_NOWAIT) only when its descriptors have events or its timers, idle or
// closing handles are due. A wake with only client sockets ready then costs one
// epoll_wait, as in a server that owns its loop.
//
// One per WorkerLoop, on the loop's thread.
#pragma once

#include <sys/epoll.h>
#include <uv.h>

#include <cstdint>

#include "common/status.h"

namespace scalws::worker {

class SocketPoller {
 public:
  // `events`: UV_READABLE | UV_WRITABLE; `status` below 0: the socket failed.
  using EventCallback = void (*)(void* owner, int status, int events);
  using ClosedCallback = void (*)(void* owner);

  class Watch {
   public:
    Watch() = default;
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    int fd() const { return fd_; }

   private:
    friend class SocketPoller;
    int fd_ = -1;
    void* owner_ = nullptr;
    EventCallback on_event_ = nullptr;
    ClosedCallback on_closed_ = nullptr;
    uint32_t registered_ = 0;  // epoll events the set holds for fd_ (0: not in the set)
    int wanted_ = 0;           // UV_READABLE | UV_WRITABLE
    int failed_ = 0;           // an error to report on a later turn (below 0)
    bool released_ = false;
    bool deferred_ = false;  // on the deferred list
    Watch* next_deferred_ = nullptr;
  };

  explicit SocketPoller(uv_loop_t* loop);
  ~SocketPoller();
  SocketPoller(const SocketPoller&) = delete;
  SocketPoller& operator=(const SocketPoller&) = delete;

  // Creates the set and its watch on `loop`; an error leaves the poller unusable.
  common::Status start();
  // Closes its handles (the loop's last turn); every watch must be released before. The
  // closed callbacks of released watches run first.
  void close();

  // Switches from being watched by libuv to waiting itself, with libuv's backend
  // descriptor in the set. False (and still watched) when that cannot be done.
  bool takeOverWait();
  bool waiting() const { return waiting_; }
  // Waiting only: one epoll_wait of at most `timeout_ms` (-1: no limit; 0 when deferred
  // callbacks are pending), the loop's time updated, the callbacks of what it found, then
  // the deferred callbacks. True when libuv needs a turn: its descriptors have events, or
  // watchers started since its last poll wait to join its set (0 ms wait then).
  bool wait(int timeout_ms);
  // The deferred callbacks (closed and failed watches) now: WorkerLoop::run calls it after
  // libuv's turn, whose callbacks may have released watches.
  void runDeferred();

  // Binds `watch` to `fd` (non-blocking, owned by the caller) and `owner`; registers
  // nothing yet.
  void attach(Watch& watch, int fd, void* owner, EventCallback on_event);
  // UV_READABLE | UV_WRITABLE, or 0.
  void want(Watch& watch, int events);
  // The set still holds `watch` for reading: no readable event has been dropped since it
  // stopped wanting to read (such an event takes it out, see above), so whatever the
  // socket held at its last read is all that had come by the last wait.
  static bool holdsForReading(const Watch& watch) { return (watch.registered_ & EPOLLIN) != 0; }
  // Out of the set now; `on_closed(owner)` on a later turn. Call once.
  void release(Watch& watch, ClosedCallback on_closed);
  // As release(), for a descriptor that `on_closed` closes and that nothing else holds
  // open (accepted or connected by this process; never one a front handed over, nor one
  // duplicated or inherited): closing the last descriptor of a socket takes it out of
  // every epoll set, so the DEL is saved, one system call per connection. Until then its
  // events are dropped, as after release().
  void releaseForClose(Watch& watch, ClosedCallback on_closed);

 private:
  static constexpr int kMaxEvents = 256;

  static void onReady(uv_poll_t* handle, int status, int events);
  static void onIdle(uv_idle_t* handle);
  void dispatch();
  // Handles events_[0..n); true when libuv's descriptor was among them.
  bool handleEvents(int n);
  void defer(Watch& watch);
  bool control(Watch& watch, int op, uint32_t events);

  uv_loop_t* loop_;
  int epoll_fd_ = -1;
  uv_poll_t ready_{};
  uv_idle_t deferred_turn_{};
  bool started_ = false;
  bool closed_ = false;
  bool waiting_ = false;
  Watch* deferred_head_ = nullptr;
  Watch** deferred_tail_ = &deferred_head_;
  epoll_event events_[kMaxEvents];
};

}  // namespace scalws::worker
