#include "worker/http3/listener.h"

#include <time.h>

#include "common/log.h"
#include "ipc/forwarded_datagram.h"
#include "ipc/uv_handle.h"
#include "worker/http3/connection.h"

namespace scalws::worker::http3 {
namespace {

// Batches per readable event: then the loop serves other sockets and timers.
constexpr int kBatchesPerEvent = 8;

// Wall-clock nanoseconds, for the tokens other processes check.
uint64_t unixNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

quic::EndpointSettings endpointSettings(const common::config::QuicConfig& quic,
                                        const ListenerSocket& socket) {
  quic::EndpointSettings s;
  s.steering_id = socket.steering_id;
  s.front_routed = socket.front_routed;
  s.route = socket.quic_route;
  s.retry_always = quic.retry == common::config::QuicConfig::Retry::kAlways;
  s.retry_above = quic.retry_above;
  s.connection = connectionSettings(quic);
  return s;
}

}  // namespace

quic::ConnectionSettings connectionSettings(const common::config::QuicConfig& quic) {
  quic::ConnectionSettings s;
  s.max_streams = quic.max_streams;
  s.stream_window = quic.stream_window;
  s.connection_window = quic.connection_window;
  s.idle_timeout = quic.idle_timeout * NGTCP2_MILLISECONDS;
  s.handshake_timeout = quic.handshake_timeout * NGTCP2_MILLISECONDS;
  s.max_udp_payload = quic::UdpSocket::kMaxDatagram;
  return s;
}

Listener::Listener(WorkerLoop& loop, const ListenerSocket& socket)
    : loop_(loop), socket_info_(socket), socket_(socket.fd) {}

Listener::~Listener() = default;

const common::config::ListenConfig& Listener::listenConfig() const {
  return loop_.snapshot()->site().listens[static_cast<size_t>(socket_info_.listen_index)];
}

common::Status Listener::start() {
  const auto& listens = loop_.snapshot()->site().listens;
  if (socket_info_.listen_index < 0 ||
      static_cast<size_t>(socket_info_.listen_index) >= listens.size() ||
      !listens[static_cast<size_t>(socket_info_.listen_index)].http3) {
    return common::invalidArgument("a UDP socket without an HTTP/3 listener");
  }
  std::shared_ptr<const quic::TlsContext> tls =
      loop_.snapshot()->quicContext(static_cast<size_t>(socket_info_.listen_index));
  if (!tls) return common::invalidArgument("HTTP/3 listener without its QUIC TLS context");
  common::Status configured = socket_.configure();
  if (!configured.ok()) return configured;
  followed_ = loop_.snapshot().get();
  endpoint_ = std::make_unique<quic::Endpoint>(endpointSettings(listenConfig().quic, socket_info_),
                                               std::move(tls), socket_, *this);
  poll_ = new uv_poll_t;
  if (uv_poll_init(loop_.uv(), poll_, socket_.fd()) != 0) {
    delete poll_;
    poll_ = nullptr;
    return common::internalError("uv_poll_init on a UDP listener failed");
  }
  poll_->data = this;
  uv_poll_start(poll_, UV_READABLE, &Listener::onPoll);
  // What timers and handlers write between reads goes out before the loop waits.
  before_wait_ = new uv_prepare_t;
  uv_prepare_init(loop_.uv(), before_wait_);
  before_wait_->data = this;
  uv_prepare_start(before_wait_, &Listener::onBeforeWait);
  uv_unref(reinterpret_cast<uv_handle_t*>(before_wait_));
  return common::okStatus();
}

void Listener::stop() {
  socket_.flush();
  ipc::closeAndDelete(before_wait_);
  ipc::closeAndDelete(poll_);
}

void Listener::onBeforeWait(uv_prepare_t* handle) {
  auto* self = static_cast<Listener*>(handle->data);
  if (self->socket_.queued() == 0) return;
  self->socket_.flush();
  self->countSocket();
}

void Listener::onPoll(uv_poll_t* handle, int status, int events) {
  (void)events;
  auto* self = static_cast<Listener*>(handle->data);
  if (status < 0) {
    LOG_ERROR("UDP listener poll failed: %s", uv_strerror(status));
    return;
  }
  self->onReadable();
}

void Listener::followSnapshot() {
  // A reload changes the Retry policy and the limits of connections to come.
  if (loop_.snapshot().get() == followed_) return;
  followed_ = loop_.snapshot().get();
  endpoint_->reconfigure(endpointSettings(listenConfig().quic, socket_info_));
}

void Listener::onReadable() {
  followSnapshot();
  quic::Datagram batch[quic::UdpSocket::kBatch];
  reading_ = true;
  for (int round = 0; round < kBatchesPerEvent; ++round) {
    size_t n = socket_.receive(batch);
    if (n == 0) break;
    uint64_t now = uv_hrtime();
    uint64_t unix_now = unixNow();
    for (size_t i = 0; i < n; ++i) endpoint_->onDatagram(batch[i], now, unix_now);
    endpoint_->endBatch(now);
    socket_.flush();  // the answers to this batch leave before the next batch is read
    if (n < quic::UdpSocket::kBatch) break;
  }
  reading_ = false;
  countSocket();
}

void Listener::sendQueued() {
  if (reading_ || forwarded_ || socket_.queued() == 0) return;
  socket_.flush();
  countSocket();
}

void Listener::countSocket() {
  const quic::UdpSocketStats& stats = socket_.stats();
  loop_.counters().bytes_in.add(stats.bytes_in - counted_in_);
  loop_.counters().bytes_out.add(stats.bytes_out - counted_out_);
  counted_in_ = stats.bytes_in;
  counted_out_ = stats.bytes_out;
  loop_.counters().quic_retries.add(endpoint_->counters().retries - counted_retries_);
  counted_retries_ = endpoint_->counters().retries;
}

void Listener::onForwarded(std::span<const uint8_t> message) {
  quic::Datagram d;
  if (!ipc::decodeForwardedDatagram(message, d).ok() || d.len > quic::UdpSocket::kMaxDatagram) {
    return;
  }
  if (!forwarded_) {
    // The first of a run: the clocks and the snapshot hold for the rest of it, as for one
    // batch read from a socket.
    followSnapshot();
    run_now_ = uv_hrtime();
    run_unix_now_ = unixNow();
    forwarded_ = true;
  }
  endpoint_->onDatagram(d, run_now_, run_unix_now_, true);
  loop_.counters().bytes_in.add(d.len);
}

void Listener::endForwarded() {
  if (!forwarded_) return;
  forwarded_ = false;
  endpoint_->endBatch(run_now_);
  socket_.flush();
  countSocket();
}

bool Listener::admitsConnection() noexcept {
  return !loop_.shuttingDown() &&
         loop_.connectionCount() < loop_.snapshot()->server().max_connections;
}

quic::EndpointConnection* Listener::createConnection(
    const quic::Connection::Start& start) noexcept {
  size_t index = static_cast<size_t>(socket_info_.listen_index);
  std::shared_ptr<const quic::TlsContext> tls = loop_.snapshot()->quicContext(index);
  auto* c = new Connection(*this, std::move(tls), connectionSettings(listenConfig().quic));
  if (!c->start(start)) {
    delete c;
    return nullptr;
  }
  loop_.counters().conn_accepted.add();
  loop_.addConnection(c);
  return c;
}

bool LoopListeners::add(const ListenerSocket& socket) {
  auto listener = std::make_unique<Listener>(loop_, socket);
  common::Status started = listener->start();
  if (!started.ok()) {
    LOG_ERROR("HTTP/3 on port %u: %s", socket.port, started.message().c_str());
    return false;
  }
  listeners_.push_back(std::move(listener));
  return true;
}

bool LoopListeners::forward(int listen_index, std::span<const uint8_t> message) {
  for (auto& l : listeners_) {
    if (l->frontRouted() && l->listenIndex() == listen_index) {
      l->onForwarded(message);
      return true;
    }
  }
  return false;
}

void LoopListeners::endForwarded() {
  for (auto& l : listeners_) l->endForwarded();
}

void LoopListeners::onLoopStopping() noexcept {
  for (auto& l : listeners_) l->stop();
}

}  // namespace scalws::worker::http3
