#include "worker/quic/udp_socket.h"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/net/udp_receive.h"

namespace scalws::worker::quic {
namespace {

constexpr int kBufferBytes = 4 * 1024 * 1024;
constexpr size_t kControlSpace = 128;  // pktinfo + TOS/TCLASS + UDP_SEGMENT

}  // namespace

UdpSocket::UdpSocket(int fd)
    : fd_(fd),
      buffers_(new uint8_t[kBatch * kMaxDatagram]),
      queue_bytes_(new uint8_t[kQueueBytes]),
      queue_(new Queued[kQueueMessages]) {}

common::Status UdpSocket::configure() {
  common::Result<common::net::UdpBinding> binding = common::net::enableDatagramInfo(fd_);
  if (!binding.ok()) return binding.status();
  family_ = binding->family;
  port_ = binding->port;
  // DF set, our own packet sizes (ngtcp2 probes the path).
  if (family_ == AF_INET) {
    int pmtu = IP_PMTUDISC_PROBE;
    setsockopt(fd_, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
  } else {
    int pmtu = IPV6_PMTUDISC_PROBE;
    setsockopt(fd_, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
  }
  // Best effort: the kernel caps it at net.core.wmem_max.
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &kBufferBytes, sizeof(kBufferBytes));
  return common::okStatus();
}

size_t UdpSocket::receive(std::span<Datagram> out) {
  size_t kept = common::net::receiveDatagrams(fd_, port_, out.first(std::min(out.size(), kBatch)),
                                              buffers_.get(), kMaxDatagram);
  for (size_t i = 0; i < kept; ++i) {
    stats_.datagrams_in += 1;
    stats_.bytes_in += out[i].len;
  }
  return kept;
}

std::span<uint8_t> UdpSocket::sendSpace() noexcept {
  if (kQueueBytes - queue_used_ < kMinSpace) flush();
  return {queue_bytes_.get() + queue_used_, kQueueBytes - queue_used_};
}

void UdpSocket::send(const ngtcp2_addr& local, const ngtcp2_addr& remote, uint8_t ecn,
                     const uint8_t* data, size_t len, size_t segment) noexcept {
  if (len == 0 || len > kQueueBytes || local.addrlen > sizeof(sockaddr_storage) ||
      remote.addrlen > sizeof(sockaddr_storage)) {
    return;
  }
  if (segment == 0 || segment > len) segment = len;
  uint8_t* tail = queue_bytes_.get() + queue_used_;
  if (data != tail) {
    // Not written in place (a Retry, a reset, a close packet, or a train written before
    // the queue was flushed under it): copied in behind the others, so order holds.
    if (kQueueBytes - queue_used_ < len) {
      flush();
      tail = queue_bytes_.get();
    }
    std::memmove(tail, data, len);
  }
  Queued& q = queue_[queue_count_++];
  std::memcpy(&q.local.storage, local.addr, local.addrlen);
  q.local.len = local.addrlen;
  std::memcpy(&q.remote.storage, remote.addr, remote.addrlen);
  q.remote.len = remote.addrlen;
  q.offset = queue_used_;
  q.len = len;
  q.segment = segment;
  q.ecn = ecn;
  queue_used_ += len;
  if (queue_count_ == kQueueMessages || kQueueBytes - queue_used_ < kMinSpace) flush();
}

namespace {

// The ancillary data of one message: the source address (a wildcard socket answers from
// the address the client sent to), the ECN bits and, for a train, the segment size.
size_t writeControl(msghdr& m, const sockaddr* local, uint8_t ecn, size_t len, size_t segment) {
  size_t used = 0;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  if (local->sa_family == AF_INET) {
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(in_pktinfo));
    in_pktinfo info{};
    info.ipi_spec_dst = reinterpret_cast<const sockaddr_in*>(local)->sin_addr;
    std::memcpy(CMSG_DATA(c), &info, sizeof(info));
    used += CMSG_SPACE(sizeof(in_pktinfo));
    c = CMSG_NXTHDR(&m, c);
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_TOS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    int tos = ecn;
    std::memcpy(CMSG_DATA(c), &tos, sizeof(tos));
    used += CMSG_SPACE(sizeof(int));
  } else {
    c->cmsg_level = IPPROTO_IPV6;
    c->cmsg_type = IPV6_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(in6_pktinfo));
    in6_pktinfo info{};
    info.ipi6_addr = reinterpret_cast<const sockaddr_in6*>(local)->sin6_addr;
    std::memcpy(CMSG_DATA(c), &info, sizeof(info));
    used += CMSG_SPACE(sizeof(in6_pktinfo));
    c = CMSG_NXTHDR(&m, c);
    c->cmsg_level = IPPROTO_IPV6;
    c->cmsg_type = IPV6_TCLASS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    int tclass = ecn;
    std::memcpy(CMSG_DATA(c), &tclass, sizeof(tclass));
    used += CMSG_SPACE(sizeof(int));
  }
  if (len > segment) {
    c = CMSG_NXTHDR(&m, c);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t size = static_cast<uint16_t>(segment);
    std::memcpy(CMSG_DATA(c), &size, sizeof(size));
    used += CMSG_SPACE(sizeof(uint16_t));
  }
  return used;
}

void prepareMessage(msghdr& m, iovec& iov, uint8_t* control, const SocketAddress& remote) {
  m = msghdr{};
  m.msg_name = const_cast<sockaddr*>(remote.get());
  m.msg_namelen = remote.len;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  std::memset(control, 0, kControlSpace);
  m.msg_control = control;
  m.msg_controllen = kControlSpace;
}

}  // namespace

void UdpSocket::flush() noexcept {
  mmsghdr msgs[kQueueMessages];
  iovec iovs[kQueueMessages];
  alignas(cmsghdr) uint8_t controls[kQueueMessages][kControlSpace];
  size_t i = 0;
  while (i < queue_count_) {
    if (!gso_ && queue_[i].len > queue_[i].segment) {
      sendSplit(queue_[i]);
      ++i;
      continue;
    }
    // The messages from i on, up to one that needs splitting.
    size_t n = 0;
    for (size_t j = i; j < queue_count_; ++j, ++n) {
      Queued& q = queue_[j];
      if (!gso_ && q.len > q.segment) break;
      iovs[n] = iovec{queue_bytes_.get() + q.offset, q.len};
      prepareMessage(msgs[n].msg_hdr, iovs[n], controls[n], q.remote);
      msgs[n].msg_hdr.msg_controllen =
          writeControl(msgs[n].msg_hdr, q.local.get(), q.ecn, q.len, q.segment);
      msgs[n].msg_len = 0;
    }
    int sent = ::sendmmsg(fd_, msgs, static_cast<unsigned>(n), 0);
    ++stats_.send_calls;
    if (sent > 0) {
      for (size_t k = i; k < i + static_cast<size_t>(sent); ++k) {
        stats_.datagrams_out += (queue_[k].len + queue_[k].segment - 1) / queue_[k].segment;
        stats_.bytes_out += queue_[k].len;
      }
      i += static_cast<size_t>(sent);
      continue;
    }
    // The message at i failed (sendmmsg reports the error of the first one only).
    if (errno == EINTR) continue;
    if (errno == EIO && queue_[i].len > queue_[i].segment) {
      LOG_NOTICE("UDP GSO refused by the kernel (%s): sending datagrams one by one",
                 strerror(errno));
      gso_ = false;  // the loop sends this train and the next ones split
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
      // The socket buffer is full: the rest is lost as far as QUIC knows, and its loss
      // recovery resends.
      stats_.send_errors += queue_count_ - i;
      break;
    }
    // An unreachable path (a migration's old address): this one is lost, the rest go.
    stats_.send_errors += 1;
    ++i;
  }
  queue_count_ = 0;
  queue_used_ = 0;
}

void UdpSocket::sendSplit(const Queued& q) {
  const uint8_t* data = queue_bytes_.get() + q.offset;
  for (size_t off = 0; off < q.len; off += q.segment) {
    size_t len = std::min(q.segment, q.len - off);
    sendOne(q, data + off, len);
  }
}

void UdpSocket::sendOne(const Queued& q, const uint8_t* data, size_t len) {
  iovec iov{const_cast<uint8_t*>(data), len};
  msghdr m;
  alignas(cmsghdr) uint8_t control[kControlSpace];
  prepareMessage(m, iov, control, q.remote);
  m.msg_controllen = writeControl(m, q.local.get(), q.ecn, len, len);
  ssize_t n;
  do {
    n = ::sendmsg(fd_, &m, 0);
    ++stats_.send_calls;
  } while (n < 0 && errno == EINTR);
  if (n >= 0) {
    stats_.datagrams_out += 1;
    stats_.bytes_out += len;
  } else {
    stats_.send_errors += 1;
  }
}

}  // namespace scalws::worker::quic
