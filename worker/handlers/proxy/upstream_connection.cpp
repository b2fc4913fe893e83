#include "worker/handlers/proxy/upstream_connection.h"

#include <cerrno>

#include "worker/handlers/proxy/upstream_spec.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::proxy {

UpstreamConnection* UpstreamConnection::open(WorkerLoop& loop, const ServerSpec& server,
                                             const UpstreamTlsContext* tls, SSL_SESSION* session,
                                             int server_index, UpstreamConnectionOwner& owner,
                                             int& err) {
  auto* c = new UpstreamConnection(loop, server_index, owner);
  err = c->socket_.connect(loop.poller(), server.address, server.address_len, c,
                           &UpstreamConnection::onPoll);
  if (err != 0) {
    delete c;
    return nullptr;
  }
  int fd = c->socket_.fd();
  bool connected = c->socket_.connectedAtOnce();
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
  if (connected && tls == nullptr) {
    c->state_ = State::kInUse;
  } else {
    c->state_ = connected ? State::kHandshaking : State::kConnecting;
    // The user hears once it is lent the connection (lend() before the first event).
    c->watch(false, true);
  }
  return c;
}

UpstreamConnection::UpstreamConnection(WorkerLoop& loop, int server_index,
                                       UpstreamConnectionOwner& owner)
    : loop_(loop), server_index_(server_index), owner_(owner) {}

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
  socket_.watch(readable, writable);
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

void UpstreamConnection::onPoll(void* owner, int status, int events) {
  auto* c = static_cast<UpstreamConnection*>(owner);
  switch (c->state_) {
    case State::kConnecting: {
      int err = c->socket_.connectResult(status);
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
  socket_.close(&UpstreamConnection::onClosed);
}

void UpstreamConnection::onClosed(void* owner) {
  auto* c = static_cast<UpstreamConnection*>(owner);
  c->transport_.reset();  // frees the SSL before the fd goes
  c->socket_.closeFd();
  delete c;
}

}  // namespace scalws::worker::proxy
