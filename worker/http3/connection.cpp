#include "worker/http3/connection.h"

#include "common/log.h"
#include "worker/http/error_response.h"
#include "worker/http/request_dispatcher.h"
#include "worker/http3/listener.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::http3 {
namespace {

uint64_t nowNs() {
  return uv_hrtime();
}

// RFC 8470 §5.2 / RFC 9110 §9.2.1: what may be answered from replayable 0-RTT data.
bool safeForEarlyData(Method method) {
  return method == Method::kGet || method == Method::kHead || method == Method::kOptions;
}

}  // namespace

SessionSettings Connection::settingsFor(const ConfigSnapshot& snapshot) {
  SessionSettings s;
  const auto& server = snapshot.server();
  s.max_field_section = server.max_header_size;
  s.max_headers = server.max_headers;
  return s;
}

Connection::Connection(Listener& listener, std::shared_ptr<const quic::TlsContext> tls,
                       const quic::ConnectionSettings& settings)
    : listener_(listener),
      loop_(listener.loop()),
      session_(*this, transport_, settingsFor(*listener.loop().snapshot()), loop_.date(),
               loop_.buffers(), &loop_.codecMemory()),
      transport_(session_, listener.endpoint(), std::move(tls), settings),
      snapshots_(loop_.snapshot()) {
  timer_.data = this;
}

Connection::~Connection() = default;

bool Connection::start(const quic::Connection::Start& start) {
  if (!transport_.start(start)) return false;
  if (uv_timer_init(loop_.uv(), &timer_) != 0) return false;
  peer_.local_port = listener_.port();
  peer_.tls = true;
  // On a shared address, the names the front would send here, as for a handed-over TCP
  // connection: another instance's name gets 421.
  if (listener_.frontRouted()) peer_.shared_hosts = loop_.sharedHosts(listener_.listenIndex());
  updatePeer();
  return true;
}

void Connection::updatePeer() {
  // The client's address is the current path's: it changes when the client migrates.
  const ngtcp2_path* path = transport_.path();
  if (path == nullptr || path->remote.addrlen > sizeof(peer_.address)) return;
  std::memcpy(&peer_.address, path->remote.addr, path->remote.addrlen);
  peer_.address_len = static_cast<socklen_t>(path->remote.addrlen);
}

void Connection::onDatagram(const quic::Datagram& datagram, uint64_t now) noexcept {
  if (state_ != State::kServing) return;
  in_event_ = true;
  session_.setNow(now / 1'000'000);
  transport_.receive(datagram, now);
  in_event_ = false;
}

void Connection::afterDatagrams(uint64_t now) noexcept {
  if (state_ != State::kServing) return;
  session_.collect();
  if (!counted_handshake_ && transport_.stats().handshake_completed) {
    counted_handshake_ = true;
    listener_.endpoint().onHandshakeCompleted(*this);
    loop_.counters().tls_handshakes.add();
    loop_.counters().quic_handshakes.add();
  }
  flush(now);
}

void Connection::flush(uint64_t now) {
  if (state_ != State::kServing) return;
  in_event_ = true;
  session_.setNow(now / 1'000'000);
  if (session_.goingAway() && session_.activeStreams() == 0) {
    // GOAWAY sent and every request taken is done (RFC 9114 §5.2).
    transport_.close(NGHTTP3_H3_NO_ERROR);
  }
  write_soon_ = transport_.write(now, listener_.socket(), listener_.endpoint().sendBuffer(),
                                 quic::Endpoint::kSendBuffer);
  session_.collect();
  in_event_ = false;
  settle(now);
}

void Connection::countTransport() {
  const quic::ConnectionStats& stats = transport_.stats();
  loop_.counters().quic_migrations.add(stats.migrations - counted_migrations_);
  loop_.counters().quic_lost_packets.add(stats.lost_packets - counted_lost_);
  counted_migrations_ = stats.migrations;
  counted_lost_ = stats.lost_packets;
}

void Connection::settle(uint64_t now) {
  countTransport();
  if (transport_.isDead()) {
    destroy();
    return;
  }
  uint64_t expiry = write_soon_ ? now : transport_.expiry();
  uint64_t delay_ms = 0;
  if (expiry > now) delay_ms = (expiry - now + 999'999) / 1'000'000;  // never early
  if (expiry == UINT64_MAX) {
    uv_timer_stop(&timer_);
    return;
  }
  uv_timer_start(&timer_, &Connection::onTimer, delay_ms, 0);
}

void Connection::onTimer(uv_timer_t* timer) {
  auto* c = static_cast<Connection*>(timer->data);
  if (c->state_ != State::kServing) return;
  uint64_t now = nowNs();
  c->in_event_ = true;
  c->session_.setNow(now / 1'000'000);
  if (!c->write_soon_) c->transport_.handleExpiry(now);
  c->in_event_ = false;
  c->flush(now);
}

void Connection::onRequest(Stream& stream) noexcept {
  updatePeer();
  const ConfigSnapshot& snap = stream.beginRequest(loop_, peer_, snapshots_);
  Request& r = stream.request();
  if (stream.requestError() != 0) {
    sendError(r, stream, stream.requestError());
    return;
  }
  if (stream.early() && !safeForEarlyData(r.method)) {
    sendError(r, stream, 425);
    return;
  }
  RequestDispatcher::dispatch(stream, snap);
}

void Connection::onResponseFinished(Stream& stream) noexcept {
  RequestDispatcher::account(stream, loop_);
  loop_.counters().http3_requests.add();
}

void Connection::onStreamClosed(Stream& stream) noexcept {
  snapshots_.release(stream.snapshot);
}

void Connection::onOutputPending() noexcept {
  // An asynchronous handler wrote: send now, unless a batch or the timer is under way
  // (it flushes when it ends).
  if (in_event_ || state_ != State::kServing) return;
  flush(nowNs());
  listener_.sendQueued();
}

void Connection::onBodyTooLarge(Stream& stream) noexcept {
  RequestDispatcher::answerError(stream, 413, false);
}

void Connection::beginShutdown() {
  if (state_ != State::kServing) return;
  if (session_.started()) {
    session_.shutdown();
  } else {
    transport_.close(NGHTTP3_H3_NO_ERROR);
  }
  if (in_event_) return;
  flush(nowNs());
  listener_.sendQueued();
}

void Connection::forceClose() {
  if (state_ != State::kServing) return;
  transport_.close(NGHTTP3_H3_NO_ERROR);
  transport_.write(nowNs(), listener_.socket(), listener_.endpoint().sendBuffer(),
                   quic::Endpoint::kSendBuffer);
  listener_.sendQueued();
  destroy();
}

void Connection::destroy() {
  if (state_ == State::kGone) return;
  state_ = State::kGone;
  session_.abortAll();
  countTransport();
  listener_.endpoint().remove(*this);
  loop_.onConnectionClosed(this);
  uv_timer_stop(&timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), &Connection::onTimerClosed);
}

void Connection::onTimerClosed(uv_handle_t* handle) {
  delete static_cast<Connection*>(handle->data);
}

}  // namespace scalws::worker::http3
