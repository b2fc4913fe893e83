#include "worker/handlers/proxy/upstream_connection.h"

#include <unistd.h>

#include <cerrno>

#include "worker/handlers/proxy/upstream_spec.h"
#include "worker/loop/worker_loop.h"
#include "worker/net/outbound_connect.h"

namespace scalws::worker::proxy {

UpstreamConnection* UpstreamConnection::open(WorkerLoop& loop, const ServerSpec& server,
                                             const UpstreamTlsContext* tls, SSL_SESSION* session,
                                             int server_index, UpstreamConnectionOwner& owner,
                                             int& err) {
  ConnectStart start = startConnect(server.address, server.address_len);
  if (start.fd < 0) {
    err = start.err;
    return nullptr;
  }
  int fd = start.fd;
  auto* c = new UpstreamConnection(loop, fd, server_index, owner);
  if (uv_poll_init(loop.uv(), &c->poll_, fd) != 0) {
    err = EIO;
    ::close(fd);
    delete c;
    return nullptr;
  }
  c->poll_.data = c;
  if (tls != nullptr) {
    auto transport = std::make_unique<ClientTlsTransport>(fd, *tls, server.tls_name, session);
    if (!transport->valid()) {
      err = ENOMEM;
      c->close();
      return nullptr;
    }
    c->tls_ = transport.get();
    c->transport_ = std::move(transport);
  } else {
    c->transport_ = std::make_unique<PlainTransport>(fd);
  }
  if (start.connected && tls == nullptr) {
    c->state_ = State::kInUse;
  } else {
    c->state_ = start.connected ? State::kHandshaking : State::kConnecting;
    // The user hears once it is lent the connection (lend() before the first event).
    c->watch(false, true);
  }
  return c;
}

UpstreamConnection::UpstreamConnection(WorkerLoop& loop, int fd, int server_index,
                                       UpstreamConnectionOwner& owner)
    : loop_(loop), fd_(fd), server_index_(server_index), owner_(owner) {}

UpstreamConnection::~UpstreamConnection() = default;

const char* UpstreamConnection::failure() const {
  return tls_ != nullptr ? tls_->failure().c_str() : "";
}

SSL_SESSION* UpstreamConnection::takeTlsSession() const {
  return tls_ != nullptr ? tls_->takeSession() : nullptr;
}

void UpstreamConnection::lend(UpstreamConnectionUser* user) {
  user_ = user;
  loop_.disarmTimeout(*this);
  if (state_ == State::kIdle) state_ = State::kInUse;
}

void UpstreamConnection::makeIdle(uint64_t idle_ms) {
  user_ = nullptr;
  state_ = State::kIdle;
  // Idle: any readiness is the server closing it (or a protocol error): the owner hears.
  watch(true, false);
  loop_.armTimeout(*this, idle_ms);
}

void UpstreamConnection::watch(bool readable, bool writable) {
  if (state_ == State::kClosing) return;
  int events = (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0);
  interest_.want(&poll_, events, &UpstreamConnection::onPoll);
}

void UpstreamConnection::onTimeout() noexcept {
  if (state_ == State::kIdle) owner_.onIdleClosed(*this);
}

void UpstreamConnection::connected() {
  state_ = State::kInUse;
  watch(false, false);
  if (user_ != nullptr) user_->onUpstreamConnected();
}

void UpstreamConnection::connectFailed(int err) {
  watch(false, false);
  if (user_ != nullptr) user_->onUpstreamConnectFailed(err);
}

void UpstreamConnection::continueHandshake() {
  switch (tls_->handshake()) {
    case ClientTlsTransport::Handshake::kDone:
      connected();
      return;
    case ClientTlsTransport::Handshake::kWantRead:
      watch(true, false);
      return;
    case ClientTlsTransport::Handshake::kWantWrite:
      watch(false, true);
      return;
    case ClientTlsTransport::Handshake::kFailed:
      connectFailed(EPROTO);
      return;
  }
}

void UpstreamConnection::onPoll(uv_poll_t* handle, int status, int events) {
  auto* c = static_cast<UpstreamConnection*>(handle->data);
  if (status >= 0) {
    events = c->interest_.filter(handle, events);
    if (events == 0) return;
  }
  switch (c->state_) {
    case State::kConnecting: {
      int err = finishedConnectError(c->fd_, status);
      if (err != 0) {
        c->connectFailed(err);
        return;
      }
      if (c->tls_ == nullptr) {
        c->connected();
        return;
      }
      c->state_ = State::kHandshaking;
      c->continueHandshake();
      return;
    }
    case State::kHandshaking:
      if (status < 0) {
        c->connectFailed(ECONNRESET);
        return;
      }
      c->continueHandshake();
      return;
    case State::kInUse:
      if (c->user_ != nullptr) c->user_->onUpstreamEvent(status, events);
      return;
    case State::kIdle:
      c->owner_.onIdleClosed(*c);
      return;
    case State::kClosing:
      return;
  }
}

void UpstreamConnection::close() {
  if (state_ == State::kClosing) return;
  // A TLS connection ends with close_notify: polite, and OpenSSL keeps the session
  // resumable only when it was shut down (a freed SSL without one invalidates it).
  if (tls_ != nullptr && (state_ == State::kIdle || state_ == State::kInUse)) {
    tls_->shutdownWrite();
  }
  state_ = State::kClosing;
  user_ = nullptr;
  loop_.disarmTimeout(*this);
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), &UpstreamConnection::onClosed);
}

void UpstreamConnection::onClosed(uv_handle_t* handle) {
  auto* c = static_cast<UpstreamConnection*>(handle->data);
  c->transport_.reset();  // frees the SSL before the fd goes
  ::close(c->fd_);
  delete c;
}

}  // namespace scalws::worker::proxy
