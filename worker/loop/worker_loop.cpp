#include "worker/loop/worker_loop.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "ipc/fd_passing.h"
#include "ipc/forwarded_datagram.h"
#include "worker/config_snapshot.h"
#include "worker/net/client_connection.h"
#include "worker/tls/pending_connection.h"
#include "worker/tls/tls_transport.h"

namespace scalws::worker {
namespace {

constexpr size_t kAcceptBatch = 64;
// A front sends one descriptor per message; room for a few lets a batching sender work
// and keeps what a wrong sender attaches from being truncated silently.
constexpr size_t kHandoffFdsPerMessage = 8;
// The largest QUIC datagram a front passes on, with its header: the room each message of
// a hand-off channel gets.
constexpr size_t kChannelMessage = ipc::kForwardedHeader + common::net::kMaxQuicDatagram;
// Messages per recvmmsg on a channel that carries datagrams.
constexpr size_t kChannelBatch = 16;
constexpr uint64_t kRejectHoldMs = 200;
constexpr size_t kMaxRejectedHeld = 1024;
constexpr std::string_view kOverloaded =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n"
    "Retry-After: 1\r\n\r\n";

}  // namespace

WorkerLoop::WorkerLoop(uv_loop_t* uv, uint32_t index,
                       std::shared_ptr<const ConfigSnapshot> snapshot, int access_log_fd,
                       LoopMetricsSetup metrics)
    : uv_(uv),
      index_(index & 0xff),
      snapshot_(std::move(snapshot)),
      poller_(uv),
      metrics_(metrics) {
  // Without its epoll set every client connection fails at its first watch and is closed.
  if (common::Status s = poller_.start(); !s.ok()) LOG_ERROR("%s", s.message().c_str());
  counters_ = metrics_.area != nullptr ? metrics_.area->slot(metrics_.slot) : nullptr;
  if (counters_ == nullptr) {
    own_counters_ = std::make_unique<LoopCounters>();
    counters_ = own_counters_.get();
  }
  uv_timer_init(uv_, &timer_);
  timer_.data = this;
  uv_timer_init(uv_, &second_timer_);
  second_timer_.data = this;
  uv_timer_start(&second_timer_, &WorkerLoop::onSecondTimer, 1000, 1000);
  uv_timer_init(uv_, &shutdown_timer_);
  shutdown_timer_.data = this;
  uv_timer_init(uv_, &reject_timer_);
  reject_timer_.data = this;
  uv_async_init(uv_, &async_, &WorkerLoop::onAsync);
  async_.data = this;
  uv_prepare_init(uv_, &turn_prepare_);
  turn_prepare_.data = this;
  uv_prepare_start(&turn_prepare_, &WorkerLoop::onPrepare);
  if (access_log_fd >= 0) {
    access_log_ = std::make_unique<AccessLog>(access_log_fd, snapshot_->server().access_log_format);
  }
  if (metrics_.process != nullptr) {
    counters_->cpu_us.set(metrics_.process->cpuMicros());
    counters_->rss_bytes.set(metrics_.process->rssBytes());
  }
}

WorkerLoop::~WorkerLoop() {
  if (access_log_) access_log_->flush();
}

void WorkerLoop::addListener(const ListenerSocket& socket) {
  if (socket.quic) {
    // Datagrams, not connections: the protocol's own per-loop state reads the socket.
    if (protocols_->http3 == nullptr || !protocols_->http3(*this, socket)) {
      LOG_ERROR("HTTP/3 is not served on port %u (%s)", socket.port,
                protocols_->http3 == nullptr ? "this build has no HTTP/3" : "see above");
    }
    return;
  }
  auto l = std::make_unique<Listener>();
  l->owner = this;
  l->socket = socket;
  poller_.attach(l->watch, socket.fd, l.get(), &WorkerLoop::onAccept);
  poller_.want(l->watch, UV_READABLE);
  listeners_.push_back(std::move(l));
}

void WorkerLoop::run() {
  if (!poller_.takeOverWait()) {
    uv_run(uv_, UV_RUN_DEFAULT);
    return;
  }
  // The poller's epoll_wait is the loop's one blocking call (socket_poller.h); libuv
  // takes a turn, without blocking, whenever it has something to do.
  bool libuv_due = true;
  for (;;) {
    if (libuv_due) {
      bool alive = uv_run(uv_, UV_RUN_NOWAIT) != 0;
      poller_.runDeferred();  // what libuv's callbacks released
      if (!alive && handles_closed_) return;
    }
    uv_update_time(uv_);
    ++turn_;
    libuv_due = poller_.wait(uv_backend_timeout(uv_));
    // Due timers, idle or pending callbacks and closing handles make this 0.
    if (uv_backend_timeout(uv_) == 0) libuv_due = true;
  }
}

void WorkerLoop::onAccept(void* owner, int status, int events) {
  (void)events;
  auto* l = static_cast<Listener*>(owner);
  if (status < 0) {
    LOG_ERROR("listener poll failed: %s", uv_strerror(status));
    return;
  }
  l->owner->acceptFrom(*l);
}

void WorkerLoop::acceptFrom(Listener& l) {
  if (l.socket.handoff) return receiveFrom(l);
  for (size_t i = 0; i < kAcceptBatch && !shutting_down_; ++i) {
    PeerInfo peer;
    peer.address_len = sizeof(peer.address);
    int fd = ::accept4(l.socket.fd, reinterpret_cast<sockaddr*>(&peer.address), &peer.address_len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        LOG_WARN("accept: %s (raise the fd limit or lower max_connections)", strerror(errno));
      }
      return;  // EAGAIN and everything else: wait for the next readiness
    }
    admit(l, fd, peer);
  }
}

void WorkerLoop::receiveFrom(Listener& l) {
  bool forwarded = receiveMessages(l);
  // The connections the datagrams reached write once, as after a batch from a socket.
  if (forwarded && protocols_->http3_forwarded_end != nullptr) {
    protocols_->http3_forwarded_end(*this);
  }
}

bool WorkerLoop::receiveMessages(Listener& l) {
  // A hand-off is one byte; on an HTTP/3 address a message may also be a QUIC datagram the
  // front passed on (ipc/forwarded_datagram.h), and those come in runs: recvmmsg there
  // (the sandbox allows it with HTTP/3), one recvmsg per message elsewhere. A stopping loop
  // reads nothing: what waits is the controller's to hand on.
  size_t batch = l.socket.carries_datagrams ? kChannelBatch : 1;
  if (!channel_buffers_) {
    channel_buffers_ = std::make_unique<uint8_t[]>(kChannelBatch * kChannelMessage);
  }
  bool forwarded = false;
  for (size_t taken = 0; taken < kAcceptBatch && !shutting_down_;) {
    mmsghdr msgs[kChannelBatch];
    iovec iovs[kChannelBatch];
    alignas(cmsghdr) char control[kChannelBatch][CMSG_SPACE(sizeof(int) * kHandoffFdsPerMessage)];
    for (size_t i = 0; i < batch; ++i) {
      iovs[i] = iovec{channel_buffers_.get() + i * kChannelMessage, kChannelMessage};
      msgs[i] = mmsghdr{};
      msgs[i].msg_hdr.msg_iov = &iovs[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = control[i];
      msgs[i].msg_hdr.msg_controllen = sizeof(control[i]);
    }
    int n;
    if (batch == 1) {
      ssize_t got = ::recvmsg(l.socket.fd, &msgs[0].msg_hdr, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      n = got < 0 ? -1 : 1;
      if (got >= 0) msgs[0].msg_len = static_cast<unsigned>(got);
    } else {
      n = ::recvmmsg(l.socket.fd, msgs, static_cast<unsigned>(batch),
                     MSG_DONTWAIT | MSG_CMSG_CLOEXEC, nullptr);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return forwarded;  // EAGAIN: nothing more queued
    }
    for (int i = 0; i < n; ++i) {
      msghdr& msg = msgs[i].msg_hdr;
      size_t got = msgs[i].msg_len;
      if (got == 0) {
        // Every sender's end is closed: the address's channel is gone (the instance stops).
        poller_.want(l.watch, 0);
        return forwarded;
      }
      if (got > 1) {
        // A datagram carries none; a confused sender's are not kept.
        ipc::forEachReceivedFd(msg, [](int fd) { ::close(fd); });
        if ((msg.msg_flags & MSG_TRUNC) == 0 && protocols_->http3_forwarded != nullptr) {
          forwarded |= protocols_->http3_forwarded(
              *this, l.socket.listen_index,
              std::span<const uint8_t>(static_cast<uint8_t*>(iovs[i].iov_base), got));
        }
        continue;
      }
      takeHandedOver(l, msg);
    }
    taken += static_cast<size_t>(n);
    if (static_cast<size_t>(n) < batch) return forwarded;
  }
  return forwarded;
}

void WorkerLoop::takeHandedOver(Listener& l, msghdr& msg) {
  if ((msg.msg_flags & MSG_CTRUNC) != 0) {
    LOG_WARN("a handed-over connection was lost: no descriptor slot left (raise the fd limit)");
  }
  ipc::forEachReceivedFd(msg, [&](int fd) {
    // The front's word is not taken for the client's address; a descriptor that is not a
    // connected TCP socket is not served at all.
    PeerInfo peer;
    peer.address_len = sizeof(peer.address);
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer.address), &peer.address_len) != 0 ||
        (peer.address.ss_family != AF_INET && peer.address.ss_family != AF_INET6)) {
      ::close(fd);
      return;
    }
    peer.shared_hosts = l.socket.shared_hosts;
    peer.handed_over = true;
    admit(l, fd, peer);
  });
}

std::shared_ptr<const SharedHosts> WorkerLoop::sharedHosts(int listen_index) const {
  for (const auto& l : listeners_) {
    if (l->socket.handoff && l->socket.listen_index == listen_index) return l->socket.shared_hosts;
  }
  return nullptr;
}

void WorkerLoop::admit(const Listener& l, int fd, PeerInfo& peer) {
  if (connection_count_ >= snapshot_->server().max_connections) {
    if (l.socket.tls) {
      ::close(fd);  // a plain-text 503 means nothing to a TLS client
    } else {
      rejectOverloaded(fd);
    }
    return;
  }
  counters_->conn_accepted.add();
  peer.local_port = l.socket.port;
  peer.tls = l.socket.tls;
  startConnection(fd, peer, l.socket.listen_index);
}

void WorkerLoop::startConnection(int fd, const PeerInfo& peer, int listen_index) {
  const common::config::ListenConfig* listen = nullptr;
  const auto& listens = snapshot_->site().listens;
  if (listen_index >= 0 && static_cast<size_t>(listen_index) < listens.size()) {
    listen = &listens[static_cast<size_t>(listen_index)];
  }
  bool proxy_header = listen != nullptr && listen->proxy_protocol;
  if (!peer.tls && (listen == nullptr || !listen->http2) && !proxy_header) {
    if (!serveConnection(std::make_unique<PlainTransport>(fd), peer, AppProtocol::kHttp1)) {
      counters_->conn_closed.add();
    }
    return;
  }
  std::unique_ptr<Transport> transport;
  auto mode = listen != nullptr && listen->http2 ? tls::PendingConnection::Mode::kH2cPreface
                                                 : tls::PendingConnection::Mode::kHttp1;
  if (peer.tls) {
    std::shared_ptr<const tls::ServerContext> context =
        listen != nullptr ? snapshot_->tlsContext(static_cast<size_t>(listen_index)) : nullptr;
    if (!context) {
      LOG_ERROR("TLS listener on port %u has no TLS context", peer.local_port);
      ::close(fd);
      counters_->conn_closed.add();
      return;
    }
    auto tls_transport = std::make_unique<tls::TlsTransport>(fd, std::move(context), buffers_);
    if (!tls_transport->valid()) {
      ::close(fd);
      counters_->conn_closed.add();
      return;
    }
    transport = std::move(tls_transport);
    mode = tls::PendingConnection::Mode::kTlsHandshake;
  } else {
    transport = std::make_unique<PlainTransport>(fd);
  }
  auto* c = new tls::PendingConnection(*this, std::move(transport), peer, mode, proxy_header);
  if (!c->start()) {
    ::close(fd);
    delete c;
    counters_->conn_closed.add();
    return;
  }
  addConnection(c);
}

bool WorkerLoop::serveConnection(std::unique_ptr<Transport> transport, const PeerInfo& peer,
                                 AppProtocol protocol) {
  int fd = transport->fd();
  ClientConnection* connection = protocols_->starter(protocol)(*this, std::move(transport), peer);
  if (connection == nullptr) {
    ::close(fd);
    return false;
  }
  addConnection(connection);
  return true;
}

void WorkerLoop::addConnection(ClientConnection* c) {
  counters_->conn_active.add();
  c->next_in_loop = connections_;
  if (connections_ != nullptr) connections_->prev_in_loop = c;
  connections_ = c;
  ++connection_count_;
}

void WorkerLoop::rejectOverloaded(int fd) {
  ssize_t ignored = ::write(fd, kOverloaded.data(), kOverloaded.size());
  (void)ignored;
  ::shutdown(fd, SHUT_WR);
  if (rejected_.size() >= kMaxRejectedHeld) {
    ::close(fd);
    return;
  }
  if (rejected_.empty())
    uv_timer_start(&reject_timer_, &WorkerLoop::onRejectTimer, kRejectHoldMs, 0);
  rejected_.push_back(fd);
}

void WorkerLoop::onRejectTimer(uv_timer_t* timer) {
  static_cast<WorkerLoop*>(timer->data)->closeRejected();
}

void WorkerLoop::closeRejected() {
  char sink[4096];
  for (int fd : rejected_) {
    while (::recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
    }
    ::close(fd);
  }
  rejected_.clear();
}

void WorkerLoop::onConnectionClosed(ClientConnection* c, bool handed_over) {
  if (c->prev_in_loop != nullptr) {
    c->prev_in_loop->next_in_loop = c->next_in_loop;
  } else {
    connections_ = c->next_in_loop;
  }
  if (c->next_in_loop != nullptr) c->next_in_loop->prev_in_loop = c->prev_in_loop;
  --connection_count_;
  counters_->conn_active.sub();
  if (!handed_over) counters_->conn_closed.add();
  if (shutting_down_) maybeFinishShutdown();
}

void WorkerLoop::armTimeout(TimeoutEntry& entry, uint64_t duration_ms) {
  timeouts_.arm(entry, duration_ms, uv_now(uv_));
  if (entry.deadline() < timer_deadline_) scheduleTimer();
}

void WorkerLoop::scheduleTimer() {
  uint64_t next = timeouts_.nextDeadline();
  timer_deadline_ = next;
  if (next == UINT64_MAX) {
    uv_timer_stop(&timer_);
    return;
  }
  uint64_t now = uv_now(uv_);
  uv_timer_start(&timer_, &WorkerLoop::onTimer, next > now ? next - now : 0, 0);
}

void WorkerLoop::onTimer(uv_timer_t* timer) {
  auto* self = static_cast<WorkerLoop*>(timer->data);
  self->timer_deadline_ = UINT64_MAX;
  self->timeouts_.expire(uv_now(self->uv_));
  self->scheduleTimer();
}

void WorkerLoop::onPrepare(uv_prepare_t* prepare) {
  ++static_cast<WorkerLoop*>(prepare->data)->turn_;
}

void WorkerLoop::onSecondTimer(uv_timer_t* timer) {
  auto* self = static_cast<WorkerLoop*>(timer->data);
  if (self->access_log_) self->access_log_->flush();
  if (self->metrics_.process != nullptr) {
    self->counters_->cpu_us.set(self->metrics_.process->cpuMicros());
    self->counters_->rss_bytes.set(self->metrics_.process->rssBytes());
  }
}

common::metrics::MetricsSnapshot WorkerLoop::siteMetrics() const {
  if (metrics_.area != nullptr) return metrics_.area->total();
  common::metrics::MetricsSnapshot s;
  counters_->addTo(s);
  return s;
}

void WorkerLoop::postSnapshot(std::shared_ptr<const ConfigSnapshot> snapshot) {
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    pending_snapshot_ = std::move(snapshot);
  }
  uv_async_send(&async_);
}

void WorkerLoop::postSharedHosts(int listen_index, std::shared_ptr<const SharedHosts> hosts) {
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    pending_hosts_.emplace_back(listen_index, std::move(hosts));
  }
  uv_async_send(&async_);
}

void WorkerLoop::postShutdown() {
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    pending_shutdown_ = true;
  }
  uv_async_send(&async_);
}

void WorkerLoop::onAsync(uv_async_t* async) {
  auto* self = static_cast<WorkerLoop*>(async->data);
  std::shared_ptr<const ConfigSnapshot> snapshot;
  std::vector<std::pair<int, std::shared_ptr<const SharedHosts>>> hosts;
  bool shutdown = false;
  {
    std::lock_guard<std::mutex> lock(self->pending_mutex_);
    snapshot = std::move(self->pending_snapshot_);
    hosts.swap(self->pending_hosts_);
    shutdown = self->pending_shutdown_;
    self->pending_shutdown_ = false;
  }
  if (snapshot) self->applySnapshot(std::move(snapshot));
  for (auto& [index, names] : hosts) {
    for (auto& l : self->listeners_) {
      if (l->socket.handoff && l->socket.listen_index == index) l->socket.shared_hosts = names;
    }
  }
  if (shutdown) self->startShutdown();
}

void WorkerLoop::applySnapshot(std::shared_ptr<const ConfigSnapshot> snapshot) {
  // Connections pick it up between requests; in-flight requests finish on the old one.
  snapshot_ = std::move(snapshot);
}

void WorkerLoop::startShutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  // The listening sockets stay open (the server owns them, and other processes share
  // them): out of the set with a DEL.
  for (auto& l : listeners_) poller_.release(l->watch, [](void*) {});
  for (ClientConnection* c = connections_; c != nullptr;) {
    ClientConnection* next = c->next_in_loop;
    c->beginShutdown();
    c = next;
  }
  uv_timer_start(&shutdown_timer_, &WorkerLoop::onShutdownTimer,
                 snapshot_->server().shutdown_timeout, 0);
  maybeFinishShutdown();
}

void WorkerLoop::onShutdownTimer(uv_timer_t* timer) {
  auto* self = static_cast<WorkerLoop*>(timer->data);
  if (self->connection_count_ > 0) {
    LOG_WARN("shutdown timeout: closing %zu connections with requests in flight",
             self->connection_count_);
  }
  for (ClientConnection* c = self->connections_; c != nullptr;) {
    ClientConnection* next = c->next_in_loop;
    c->forceClose();
    c = next;
  }
}

void WorkerLoop::maybeFinishShutdown() {
  if (connection_count_ > 0 || handles_closed_) return;
  handles_closed_ = true;
  if (access_log_) access_log_->flush();
  // Kept connections to PHP pools and upstreams are handles too.
  locals_.loopStopping();
  // Closing the last handles lets uv_run return.
  poller_.close();
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&second_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&shutdown_timer_), nullptr);
  closeRejected();
  uv_close(reinterpret_cast<uv_handle_t*>(&reject_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&turn_prepare_), nullptr);
  if (on_drained_) on_drained_();
}

}  // namespace scalws::worker
