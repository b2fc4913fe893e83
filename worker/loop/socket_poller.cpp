#include "worker/loop/socket_poller.h"

#include <unistd.h>

#include <cerrno>

namespace scalws::worker {

namespace {

uint32_t toEpoll(int events) {
  return ((events & UV_READABLE) != 0 ? EPOLLIN : 0u) |
         ((events & UV_WRITABLE) != 0 ? EPOLLOUT : 0u);
}

int fromEpoll(uint32_t events) {
  return ((events & EPOLLIN) != 0 ? UV_READABLE : 0) | ((events & EPOLLOUT) != 0 ? UV_WRITABLE : 0);
}

// libuv applies a watcher started or changed outside its own poll to its epoll set only on
// its next poll (uv__io_start queues it on the loop's watcher queue). Until then nothing of
// that descriptor reaches libuv's set, so a loop that blocks in our set would not wake for
// it: such a change must give libuv a turn at once. The queue is a private field; its first
// word is the head's next pointer in every libuv release (void*[2] up to 1.44, then
// struct uv__queue), which points back at the head when the queue is empty.
bool libuvHasQueuedWatchers(const uv_loop_t* loop) {
  const void* head = &loop->watcher_queue;
  return *static_cast<void* const*>(head) != head;
}

}  // namespace

SocketPoller::SocketPoller(uv_loop_t* loop) : loop_(loop) {}

SocketPoller::~SocketPoller() {
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

common::Status SocketPoller::start() {
  uv_idle_init(loop_, &deferred_turn_);
  deferred_turn_.data = this;
  started_ = true;
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return common::errnoStatus(errno, "epoll_create1 for the client sockets");
  int rc = uv_poll_init(loop_, &ready_, epoll_fd_);
  if (rc != 0) {
    ::close(epoll_fd_);
    epoll_fd_ = -1;
    return common::errnoStatus(-rc, "watching the client sockets' epoll set");
  }
  ready_.data = this;
  rc = uv_poll_start(&ready_, UV_READABLE, &SocketPoller::onReady);
  if (rc != 0) return common::errnoStatus(-rc, "watching the client sockets' epoll set");
  return common::okStatus();
}

void SocketPoller::close() {
  if (!started_ || closed_) return;
  // Connections released on the way out (the kept upstream and PHP connections) are freed
  // now: a watched poller's idle turn will not come again.
  runDeferred();
  closed_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&deferred_turn_), nullptr);
  if (epoll_fd_ >= 0) uv_close(reinterpret_cast<uv_handle_t*>(&ready_), nullptr);
}

bool SocketPoller::takeOverWait() {
  if (epoll_fd_ < 0 || closed_ || waiting_) return waiting_;
  // libuv's set must not hold ours while ours holds libuv's (epoll refuses the loop).
  // uv_poll_stop leaves a descriptor libuv has polled in its set until an event for it
  // comes, so it is taken out here; on failure it goes back as it was.
  int libuv_fd = uv_backend_fd(loop_);
  uv_poll_stop(&ready_);
  bool was_in_libuv = ::epoll_ctl(libuv_fd, EPOLL_CTL_DEL, epoll_fd_, nullptr) == 0;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // libuv's descriptor; every watch has a non-null pointer
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, libuv_fd, &ev) != 0) {
    if (was_in_libuv) {
      epoll_event back{};
      back.events = EPOLLIN;
      back.data.fd = epoll_fd_;  // what libuv registers
      ::epoll_ctl(libuv_fd, EPOLL_CTL_ADD, epoll_fd_, &back);
    }
    uv_poll_start(&ready_, UV_READABLE, &SocketPoller::onReady);
    return false;
  }
  waiting_ = true;
  uv_idle_stop(&deferred_turn_);  // WorkerLoop::run calls runDeferred from now on
  return true;
}

bool SocketPoller::wait(int timeout_ms) {
  if (deferred_head_ != nullptr || libuvHasQueuedWatchers(loop_)) timeout_ms = 0;
  int n = ::epoll_wait(epoll_fd_, events_, kMaxEvents, timeout_ms);
  uv_update_time(loop_);  // the callbacks' uv_now is after the wait, as in libuv's own poll
  bool libuv_ready = n > 0 && handleEvents(n);
  runDeferred();
  return libuv_ready || libuvHasQueuedWatchers(loop_);
}

void SocketPoller::attach(Watch& watch, int fd, void* owner, EventCallback on_event) {
  watch.fd_ = fd;
  watch.owner_ = owner;
  watch.on_event_ = on_event;
}

void SocketPoller::want(Watch& watch, int events) {
  if (watch.released_) return;
  watch.wanted_ = events;
  uint32_t target = toEpoll(events);
  if (events == 0 || target == watch.registered_) return;
  if (!control(watch, watch.registered_ == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, target)) {
    watch.registered_ = 0;
    watch.failed_ = -errno;
    defer(watch);
    return;
  }
  watch.registered_ = target;
}

void SocketPoller::release(Watch& watch, ClosedCallback on_closed) {
  watch.released_ = true;
  watch.on_closed_ = on_closed;
  if (watch.registered_ != 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, watch.fd_, nullptr);
    watch.registered_ = 0;
  }
  defer(watch);
}

void SocketPoller::releaseForClose(Watch& watch, ClosedCallback on_closed) {
  watch.released_ = true;
  watch.on_closed_ = on_closed;
  watch.registered_ = 0;  // still in the set until on_closed's close; its events dropped
  defer(watch);
}

bool SocketPoller::control(Watch& watch, int op, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = &watch;
  if (::epoll_ctl(epoll_fd_, op, watch.fd_, &ev) == 0) return true;
  // Our idea of the registration went wrong somewhere (it never should): say it right.
  if (op == EPOLL_CTL_ADD && errno == EEXIST)
    return ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, watch.fd_, &ev) == 0;
  if (op == EPOLL_CTL_MOD && errno == ENOENT)
    return ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, watch.fd_, &ev) == 0;
  return false;
}

void SocketPoller::onReady(uv_poll_t* handle, int status, int) {
  if (status < 0) return;  // the epoll set itself cannot fail short of a bug; nothing to do
  static_cast<SocketPoller*>(handle->data)->dispatch();
}

void SocketPoller::dispatch() {
  int n;
  do {
    n = ::epoll_wait(epoll_fd_, events_, kMaxEvents, 0);
  } while (n < 0 && errno == EINTR);
  if (n > 0) handleEvents(n);
}

bool SocketPoller::handleEvents(int n) {
  bool libuv_ready = false;
  for (int i = 0; i < n; ++i) {
    if (events_[i].data.ptr == nullptr) {
      libuv_ready = true;
      continue;
    }
    // A watch released by an earlier callback of this batch is still in memory (it is freed
    // after the batch) and says so.
    Watch& watch = *static_cast<Watch*>(events_[i].data.ptr);
    if (watch.released_ || watch.registered_ == 0) continue;
    uint32_t ev = events_[i].events;
    if ((ev & EPOLLERR) != 0 && (ev & EPOLLPRI) == 0) {
      // As libuv's poll: a socket error stops the watch and is reported as UV_EBADF.
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, watch.fd_, nullptr);
      watch.registered_ = 0;
      watch.on_event_(watch.owner_, UV_EBADF, 0);
      continue;
    }
    if ((ev & EPOLLHUP) != 0) ev |= watch.registered_;  // a hang-up: whatever it waits for
    if (watch.wanted_ == 0) {
      // An event for a socket that wants nothing for now: only then is it unregistered.
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, watch.fd_, nullptr);
      watch.registered_ = 0;
      continue;
    }
    watch.on_event_(watch.owner_, 0, fromEpoll(ev));
  }
  return libuv_ready;
}

void SocketPoller::defer(Watch& watch) {
  if (watch.deferred_) return;
  watch.deferred_ = true;
  watch.next_deferred_ = nullptr;
  *deferred_tail_ = &watch;
  deferred_tail_ = &watch.next_deferred_;
  if (started_ && !closed_ && !waiting_) uv_idle_start(&deferred_turn_, &SocketPoller::onIdle);
}

void SocketPoller::onIdle(uv_idle_t* handle) {
  static_cast<SocketPoller*>(handle->data)->runDeferred();
}

void SocketPoller::runDeferred() {
  Watch* list = deferred_head_;
  deferred_head_ = nullptr;
  deferred_tail_ = &deferred_head_;
  while (list != nullptr) {
    Watch* watch = list;
    list = watch->next_deferred_;
    watch->next_deferred_ = nullptr;
    watch->deferred_ = false;
    if (watch->released_) {
      watch->on_closed_(watch->owner_);  // may free the watch with its owner
      continue;
    }
    if (watch->failed_ != 0) {
      int status = watch->failed_;
      watch->failed_ = 0;
      watch->on_event_(watch->owner_, status, 0);
    }
  }
  if (deferred_head_ == nullptr && started_ && !closed_) uv_idle_stop(&deferred_turn_);
}

}  // namespace scalws::worker
