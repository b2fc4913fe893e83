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
  closed_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&deferred_turn_), nullptr);
  if (epoll_fd_ >= 0) uv_close(reinterpret_cast<uv_handle_t*>(&ready_), nullptr);
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
  for (int i = 0; i < n; ++i) {
    // A watch released by an earlier callback of this batch is still in memory (it is freed
    // on a later turn) and says so.
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
}

void SocketPoller::defer(Watch& watch) {
  if (watch.deferred_) return;
  watch.deferred_ = true;
  watch.next_deferred_ = nullptr;
  *deferred_tail_ = &watch;
  deferred_tail_ = &watch.next_deferred_;
  if (started_ && !closed_) uv_idle_start(&deferred_turn_, &SocketPoller::onIdle);
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
  if (deferred_head_ == nullptr && !closed_) uv_idle_stop(&deferred_turn_);
}

}  // namespace scalws::worker
