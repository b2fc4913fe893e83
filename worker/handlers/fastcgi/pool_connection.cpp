#include "worker/handlers/fastcgi/pool_connection.h"

#include <unistd.h>

#include <cerrno>

#include "worker/handlers/fastcgi/pool_state.h"
#include "worker/net/outbound_connect.h"

namespace scalws::worker::fastcgi {

PoolConnection* PoolConnection::open(uv_loop_t* uv, PoolState& pool, int& err) {
  const PoolSpec& spec = pool.spec();
  ConnectStart start = startConnect(spec.address, spec.address_len);
  if (start.fd < 0) {
    err = start.err;
    return nullptr;
  }
  int fd = start.fd;
  auto* c = new PoolConnection(pool, fd);
  if (uv_poll_init(uv, &c->poll_, fd) != 0) {
    err = EIO;
    ::close(fd);
    delete c;
    return nullptr;
  }
  c->poll_.data = c;
  c->state_ = start.connected ? State::kInUse : State::kConnecting;
  if (c->state_ == State::kConnecting) c->watch(false, true);
  return c;
}

void PoolConnection::lend(PoolConnectionUser* user) {
  user_ = user;
  if (state_ == State::kIdle) state_ = State::kInUse;
}

void PoolConnection::makeIdle() {
  user_ = nullptr;
  state_ = State::kIdle;
  // Idle: any readiness is the pool closing it (or a protocol error): the PoolState hears.
  watch(true, false);
}

void PoolConnection::watch(bool readable, bool writable) {
  if (state_ == State::kClosing) return;
  int events = (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0);
  interest_.want(&poll_, events, &PoolConnection::onPoll);
}

void PoolConnection::onPoll(uv_poll_t* handle, int status, int events) {
  auto* c = static_cast<PoolConnection*>(handle->data);
  if (status >= 0) {
    events = c->interest_.filter(handle, events);
    if (events == 0) return;
  }
  switch (c->state_) {
    case State::kConnecting: {
      int err = finishedConnectError(c->fd_, status);
      if (err == 0) {
        c->state_ = State::kInUse;
        c->watch(false, false);
        if (c->user_ != nullptr) c->user_->onPoolConnected();
      } else if (c->user_ != nullptr) {
        c->user_->onPoolConnectFailed(err);
      }
      return;
    }
    case State::kInUse:
      if (c->user_ != nullptr) c->user_->onPoolEvent(status, events);
      return;
    case State::kIdle:
      c->pool_.onIdleEvent(*c);
      return;
    case State::kClosing:
      return;
  }
}

void PoolConnection::close() {
  if (state_ == State::kClosing) return;
  state_ = State::kClosing;
  user_ = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), &PoolConnection::onClosed);
}

void PoolConnection::onClosed(uv_handle_t* handle) {
  auto* c = static_cast<PoolConnection*>(handle->data);
  ::close(c->fd_);
  delete c;
}

}  // namespace scalws::worker::fastcgi
