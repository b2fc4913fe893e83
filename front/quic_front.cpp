#include "front/quic_front.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/net/udp_receive.h"
#include "ipc/forwarded_datagram.h"

namespace scalws::front {
namespace {

constexpr size_t kBatchesPerEvent = 8;

std::string keyOf(std::span<const uint8_t> id) {
  return std::string(reinterpret_cast<const char*>(id.data()), id.size());
}

// OpenSSL finds its HKDF, AES-ECB and AES-GCM implementations (and reads its config file)
// on first use; the sandbox allows no open after start-up, so the first use is here: a
// well-formed Initial whose payload fails authentication.
void warmUpCrypto() {
  std::array<uint8_t, 1200> packet{};
  size_t at = 0;
  packet[at++] = 0xc3;  // long header, Initial, 4-byte packet number
  packet[at++] = 0;
  packet[at++] = 0;
  packet[at++] = 0;
  packet[at++] = 1;  // QUIC v1
  packet[at++] = 8;  // DCID length
  at += 8;
  packet[at++] = 0;  // SCID length
  packet[at++] = 0;  // token length
  size_t length = packet.size() - at - 2;
  packet[at++] = static_cast<uint8_t>(0x40 | (length >> 8));
  packet[at++] = static_cast<uint8_t>(length);
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  (void)decodeInitialDatagram(packet, scratch);
}

}  // namespace

common::Result<std::unique_ptr<QuicFront>> QuicFront::create(uv_loop_t* loop, common::UniqueFd udp,
                                                             ipc::FrontCounters& counters,
                                                             Handoffs& handoffs) {
  common::Result<common::net::UdpBinding> binding = common::net::enableDatagramInfo(udp.get());
  if (!binding.ok()) return binding.status();
  warmUpCrypto();
  auto front = std::unique_ptr<QuicFront>(new QuicFront(loop, std::move(udp), counters, handoffs));
  front->port_ = binding->port;
  return front;
}

QuicFront::QuicFront(uv_loop_t* loop, common::UniqueFd udp, ipc::FrontCounters& counters,
                     Handoffs& handoffs)
    : loop_(loop),
      udp_(std::move(udp)),
      counters_(counters),
      handoffs_(handoffs),
      buffers_(new uint8_t[common::net::kMaxReceiveBatch * kMaxQuicDatagram]) {
  uv_poll_init(loop_, &poll_, udp_.get());
  poll_.data = this;
}

QuicFront::~QuicFront() {
  close();
}

void QuicFront::start() {
  if (closed_) return;
  uv_poll_start(&poll_, UV_READABLE, &QuicFront::onReadable);
}

void QuicFront::close() {
  if (closed_) return;
  closed_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), nullptr);
}

void QuicFront::setRoutes(std::shared_ptr<const RouteTable> routes) {
  routes_ = std::move(routes);
  channels_.clear();
  for (const std::shared_ptr<InstanceRoute>& instance : routes_->routes()) {
    for (size_t i = 0; i < instance->channels.size() && i < instance->channel_ids.size(); ++i) {
      const ipc::FrontChannel& id = instance->channel_ids[i];
      common::net::QuicRoute route = common::net::quicRouteOf(instance->instance, id.slot, id.loop);
      channels_[route] = Channel{route, instance->channels[i].get()};
    }
  }
}

void QuicFront::onReadable(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<QuicFront*>(handle->data);
  if (status < 0) {
    LOG_ERROR("UDP socket poll failed: %s", uv_strerror(status));
    return;
  }
  self->receive();
}

void QuicFront::receive() {
  common::net::Datagram batch[common::net::kMaxReceiveBatch];
  for (size_t round = 0; round < kBatchesPerEvent; ++round) {
    size_t n =
        common::net::receiveDatagrams(udp_.get(), port_, batch, buffers_.get(), kMaxQuicDatagram);
    if (n == 0) break;
    uint64_t now = uv_now(loop_);
    for (size_t i = 0; i < n; ++i) dispatch(batch[i], now);
    flush();  // before the next batch reuses the buffers
    if (n < common::net::kMaxReceiveBatch) break;
  }
}

void QuicFront::dispatch(const common::net::Datagram& d, uint64_t now_ms) {
  sweep(now_ms);
  std::span<const uint8_t> bytes(d.data, d.len);
  std::optional<LongHeader> header = readLongHeader(bytes);
  std::span<const uint8_t> dcid;
  if (header) {
    dcid = header->dcid;
  } else if (!bytes.empty() && (bytes[0] & 0x80) == 0) {
    // A short header's DCID has no length on the wire: a worker's IDs start with a route.
    dcid = bytes.subspan(1, std::min(bytes.size() - 1, common::net::kQuicRouteLength));
  }
  // An ID a worker issued: straight to its loop.
  if (dcid.size() >= common::net::kQuicRouteLength) {
    common::net::QuicRoute route;
    std::memcpy(route.data(), dcid.data(), route.size());
    auto channel = channels_.find(route);
    if (channel != channels_.end()) {
      forward(channel->second.fd, d);
      return;
    }
  }
  if (!header || header->type == LongHeader::Type::kUnknownVersion) {
    ++counters_.quic_dropped;
    return;
  }
  std::string key = keyOf(dcid);
  // An ID the client chose, for a connection already given to a worker.
  auto known = known_.find(key);
  if (known != known_.end()) {
    auto channel = channels_.find(known->second.route);
    if (channel == channels_.end()) {
      known_.erase(known);
      ++counters_.quic_dropped;
      return;
    }
    known->second.used_ms = now_ms;
    forward(channel->second.fd, d);
    return;
  }
  if (header->type != LongHeader::Type::kInitial) {
    ++counters_.quic_dropped;  // 0-RTT ahead of its Initial, or garbage
    return;
  }
  auto pending = pending_.find(key);
  if (pending == pending_.end()) {
    if (pending_.size() >= kMaxPending) evictOldestPending();
    pending = pending_.emplace(key, Pending{}).first;
    pending->second.started_ms = now_ms;
  }
  Pending& p = pending->second;
  QuicInitialPeek peek = peekQuicInitial(bytes, p.hello);
  if (peek.datagram != InitialDatagram::Outcome::kInitial) {
    // Not decryptable: dropped, and the handshake so far stays as it was.
    ++counters_.quic_dropped;
    if (p.held.empty()) pending_.erase(pending);
    return;
  }
  if (peek.hello.outcome == ServerNamePeek::Outcome::kNeedMore) {
    std::string message = encode(d);
    if (message.empty()) {
      ++counters_.quic_dropped;
      return;
    }
    if (p.held.size() < kMaxHeld) {
      p.held.push_back(std::move(message));
    } else {
      ++counters_.quic_dropped;
    }
    return;
  }
  InstanceRoute* instance = nullptr;
  if (peek.hello.outcome == ServerNamePeek::Outcome::kName) {
    instance = routes_->find(peek.hello.name);
  } else if (peek.hello.outcome == ServerNamePeek::Outcome::kNoName) {
    instance = routes_->fallback();
  }
  if (peek.hello.outcome == ServerNamePeek::Outcome::kInvalid) {
    ++counters_.invalid;
  } else if (instance == nullptr) {
    ++counters_.unknown_name;
  }
  const Channel* channel = instance != nullptr ? pick(*instance, dcid) : nullptr;
  if (channel == nullptr) {
    if (instance != nullptr) ++counters_.unavailable;
    counters_.quic_dropped += p.held.size() + 1;
    pending_.erase(pending);
    return;
  }
  // What was held goes first, then this one with the rest of the batch.
  if (!p.held.empty()) flush();
  for (const std::string& held : p.held) send(channel->fd, held);
  forward(channel->fd, d);
  ++counters_.quic_routed;
  auto handed = handoffs_.find(instance->instance);
  if (handed == handoffs_.end()) handed = handoffs_.emplace(instance->instance, 0).first;
  ++handed->second;
  pending_.erase(pending);
  if (known_.size() >= kMaxKnown) sweep(now_ms, true);
  if (known_.size() < kMaxKnown) known_[key] = Known{channel->route, now_ms};
}

const QuicFront::Channel* QuicFront::pick(const InstanceRoute& instance,
                                          std::span<const uint8_t> dcid) const {
  size_t count = std::min(instance.channels.size(), instance.channel_ids.size());
  if (count == 0) return nullptr;
  // FNV-1a of the ID: stable across calls, and a client picks its ID at random anyway.
  uint32_t hash = 2166136261u;
  for (uint8_t b : dcid) hash = (hash ^ b) * 16777619u;
  for (size_t tried = 0; tried < count; ++tried) {
    const ipc::FrontChannel& id = instance.channel_ids[(hash + tried) % count];
    auto channel = channels_.find(common::net::quicRouteOf(instance.instance, id.slot, id.loop));
    if (channel != channels_.end()) return &channel->second;
  }
  return nullptr;
}

std::string QuicFront::encode(const common::net::Datagram& d) {
  std::string message(ipc::kForwardedHeader + d.len, '\0');
  if (!ipc::encodeForwardedHeader(d, reinterpret_cast<uint8_t*>(message.data()))) return {};
  std::memcpy(message.data() + ipc::kForwardedHeader, d.data, d.len);
  return message;
}

void QuicFront::forward(int channel_fd, const common::net::Datagram& d) {
  if (outbox_count_ == outbox_.size()) flush();
  Outgoing& out = outbox_[outbox_count_];
  if (!ipc::encodeForwardedHeader(d, out.header)) {
    ++counters_.quic_dropped;
    return;
  }
  out.fd = channel_fd;
  out.payload = d.data;
  out.len = d.len;
  ++outbox_count_;
}

void QuicFront::flush() {
  // One sendmmsg per channel: a batch of a busy connection's datagrams wakes its loop once.
  mmsghdr msgs[kOutbox];
  iovec iovs[kOutbox][2];
  bool done[kOutbox] = {};
  for (size_t first = 0; first < outbox_count_; ++first) {
    if (done[first]) continue;
    int fd = outbox_[first].fd;
    unsigned count = 0;
    for (size_t i = first; i < outbox_count_; ++i) {
      if (done[i] || outbox_[i].fd != fd) continue;
      done[i] = true;
      Outgoing& out = outbox_[i];
      iovs[count][0] = iovec{out.header, ipc::kForwardedHeader};
      iovs[count][1] = iovec{const_cast<uint8_t*>(out.payload), out.len};
      msgs[count] = mmsghdr{};
      msgs[count].msg_hdr.msg_iov = iovs[count];
      msgs[count].msg_hdr.msg_iovlen = 2;
      ++count;
    }
    int sent;
    do {
      sent = ::sendmmsg(fd, msgs, count, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    // What did not fit (the loop is behind: its queue is full) or went nowhere is dropped.
    unsigned delivered = sent > 0 ? static_cast<unsigned>(sent) : 0;
    counters_.quic_forwarded += delivered;
    counters_.quic_dropped += count - delivered;
  }
  outbox_count_ = 0;
}

void QuicFront::send(int channel_fd, const std::string& message) {
  ssize_t sent;
  do {
    sent = ::send(channel_fd, message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent == static_cast<ssize_t>(message.size())) {
    ++counters_.quic_forwarded;
  } else {
    ++counters_.quic_dropped;  // the loop is behind (its queue is full) or gone
  }
}

void QuicFront::evictOldestPending() {
  auto oldest = pending_.begin();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->second.started_ms < oldest->second.started_ms) oldest = it;
  }
  counters_.quic_dropped += oldest->second.held.size();
  pending_.erase(oldest);
}

void QuicFront::sweep(uint64_t now_ms, bool force) {
  if (!force && now_ms < last_sweep_ms_ + 1000) return;
  last_sweep_ms_ = now_ms;
  std::erase_if(pending_, [&](const auto& entry) {
    if (now_ms < entry.second.started_ms + kPendingTtlMs) return false;
    counters_.quic_dropped += entry.second.held.size();
    return true;
  });
  std::erase_if(known_,
                [&](const auto& entry) { return now_ms >= entry.second.used_ms + kKnownTtlMs; });
}

}  // namespace scalws::front
