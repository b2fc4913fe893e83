#include "worker/tls/pending_connection.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "common/log.h"
#include "worker/config_snapshot.h"
#include "worker/loop/worker_loop.h"
#include "worker/tls/tls_transport.h"

namespace scalws::worker::tls {
namespace {

// RFC 9113 §3.4: the client connection preface.
constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
// A preface cut between two packets: look again this soon (the socket stays readable, so
// waiting on the poller would spin).
constexpr uint64_t kRepeekMs = 5;

}  // namespace

PendingConnection::PendingConnection(WorkerLoop& loop, std::unique_ptr<Transport> transport,
                                     const PeerInfo& peer, Mode mode, bool proxy_header)
    : loop_(loop), transport_(std::move(transport)), peer_(peer), mode_(mode) {
  if (mode_ == Mode::kTlsHandshake) tls_ = static_cast<TlsTransport*>(transport_.get());
  if (proxy_header) proxy_ = std::make_unique<ProxyHeaderReader>();
  poll_.data = this;
}

PendingConnection::~PendingConnection() {
  loop_.disarmTimeout(*this);
}

bool PendingConnection::start() {
  if (uv_poll_init(loop_.uv(), &poll_, transport_->fd()) != 0) return false;
  uint64_t timeout = loop_.snapshot()->server().header_timeout;
  deadline_ms_ = uv_now(loop_.uv()) + timeout;
  loop_.armTimeout(*this, timeout);
  watch(UV_READABLE);
  return true;
}

void PendingConnection::watch(int events) {
  if (events == poll_events_) return;
  poll_events_ = events;
  if (events == 0) {
    uv_poll_stop(&poll_);
  } else {
    uv_poll_start(&poll_, events, &PendingConnection::onPollEvent);
  }
}

void PendingConnection::onPollEvent(uv_poll_t* handle, int status, int events) {
  (void)events;
  auto* c = static_cast<PendingConnection*>(handle->data);
  if (c->state_ != State::kWaiting) return;
  if (status < 0) {
    c->close();
    return;
  }
  c->advance();
}

void PendingConnection::advance() {
  if (proxy_) {
    readProxyHeader();
    return;
  }
  switch (mode_) {
    case Mode::kTlsHandshake:
      advanceHandshake();
      return;
    case Mode::kH2cPreface:
      sniffPreface();
      return;
    case Mode::kHttp1:
      handOver(AppProtocol::kHttp1);
      return;
  }
}

void PendingConnection::readProxyHeader() {
  switch (proxy_->read(transport_->fd())) {
    case ProxyHeaderReader::Result::kNeedMore:
      return;  // within the deadline
    case ProxyHeaderReader::Result::kFailed:
      // Whoever connects without the balancer's header is not behind it: nothing to say.
      LOG_DEBUG("connection on port %u: no valid PROXY protocol header", peer_.local_port);
      close();
      return;
    case ProxyHeaderReader::Result::kDone:
      break;
  }
  if (proxy_->header().has_client) {
    const sockaddr_storage& client = proxy_->header().client;
    peer_.address = client;
    peer_.address_len = client.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  }
  proxy_.reset();
  // What followed the header may be here already (the socket stays readable then).
  advance();
}

void PendingConnection::advanceHandshake() {
  switch (tls_->handshake()) {
    case TlsTransport::Handshake::kDone:
      loop_.counters().tls_handshakes.add();
      handOver(tls_->alpn() == "h2" ? AppProtocol::kHttp2 : AppProtocol::kHttp1);
      return;
    case TlsTransport::Handshake::kWantRead:
      watch(UV_READABLE);
      return;
    case TlsTransport::Handshake::kWantWrite:
      watch(UV_WRITABLE);
      return;
    case TlsTransport::Handshake::kFailed:
      // Scanners and clients with nothing in common with our policy: not an operator's
      // problem, so only at debug level.
      LOG_DEBUG("TLS handshake failed: %s", tls_->failure().c_str());
      close();
      return;
  }
}

void PendingConnection::sniffPreface() {
  char buf[kPreface.size()];
  ssize_t n;
  do {
    n = ::recv(transport_->fd(), buf, sizeof(buf), MSG_PEEK);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
  if (n <= 0) {
    close();
    return;
  }
  size_t got = static_cast<size_t>(n);
  if (std::string_view(buf, got) != kPreface.substr(0, got)) {
    handOver(AppProtocol::kHttp1);
    return;
  }
  if (got == kPreface.size()) {
    handOver(AppProtocol::kHttp2);
    return;
  }
  // A prefix of the preface so far: look again shortly, within the deadline.
  watch(0);
  uint64_t now = uv_now(loop_.uv());
  if (now >= deadline_ms_) {
    close();
    return;
  }
  retry_armed_ = true;
  loop_.armTimeout(*this, std::min(kRepeekMs, deadline_ms_ - now));
}

void PendingConnection::onTimeout() noexcept {
  if (retry_armed_ && uv_now(loop_.uv()) < deadline_ms_) {
    retry_armed_ = false;
    loop_.armTimeout(*this, deadline_ms_ - uv_now(loop_.uv()));
    watch(UV_READABLE);
    sniffPreface();
    return;
  }
  close();  // header_timeout: nothing usable arrived
}

void PendingConnection::handOver(AppProtocol protocol) {
  protocol_ = protocol;
  state_ = State::kHandingOver;
  loop_.disarmTimeout(*this);
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), &PendingConnection::onPollClosed);
}

void PendingConnection::close() {
  if (state_ != State::kWaiting) return;
  state_ = State::kClosed;
  loop_.disarmTimeout(*this);
  if (tls_ != nullptr) tls_->flushPending();  // a last alert, if the socket takes it
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), &PendingConnection::onPollClosed);
}

void PendingConnection::onPollClosed(uv_handle_t* handle) {
  auto* c = static_cast<PendingConnection*>(handle->data);
  bool handed_over = false;
  if (c->state_ == State::kHandingOver && !c->loop_.shuttingDown()) {
    // Registered before this one leaves, so a draining loop never sees zero in between.
    handed_over = c->loop_.serveConnection(std::move(c->transport_), c->peer_, c->protocol_);
  } else {
    ::close(c->transport_->fd());
  }
  c->loop_.onConnectionClosed(c, handed_over);
  delete c;
}

}  // namespace scalws::worker::tls
