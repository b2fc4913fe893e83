#include "worker/handlers/fastcgi/pool_connection.h"

#include "worker/handlers/fastcgi/pool_state.h"

namespace scalws::worker::fastcgi {

PoolConnection* PoolConnection::open(SocketPoller& poller, PoolState& pool, int& err) {
  const PoolSpec& spec = pool.spec();
  auto* c = new PoolConnection(pool);
  err = c->socket_.connect(poller, spec.address, spec.address_len, c, &PoolConnection::onPoll);
  if (err != 0) {
    delete c;
    return nullptr;
  }
  c->state_ = c->socket_.connectedAtOnce() ? State::kInUse : State::kConnecting;
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
  socket_.watch(readable, writable);
}

void PoolConnection::onPoll(void* owner, int status, int events) {
  auto* c = static_cast<PoolConnection*>(owner);
  switch (c->state_) {
    case State::kConnecting: {
      int err = c->socket_.connectResult(status);
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
  socket_.close(&PoolConnection::onClosed);
}

void PoolConnection::onClosed(void* owner) {
  auto* c = static_cast<PoolConnection*>(owner);
  c->socket_.closeFd();
  delete c;
}

}  // namespace scalws::worker::fastcgi
