#include "worker/quic/udp_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace scalws::worker::quic {
namespace {

constexpr int kBufferBytes = 4 * 1024 * 1024;
constexpr size_t kControlSpace = 128;  // pktinfo + TOS/TCLASS + UDP_SEGMENT

void setPort(SocketAddress& a, uint16_t port) {
  if (a.storage.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&a.storage)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(&a.storage)->sin6_port = htons(port);
  }
}

}  // namespace

UdpSocket::UdpSocket(int fd) : fd_(fd), buffers_(new uint8_t[kBatch * kMaxDatagram]) {}

common::Status UdpSocket::configure() {
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    return common::errnoStatus(errno, "getsockname on a UDP listener");
  }
  family_ = bound.ss_family;
  int one = 1;
  bool ok = true;
  if (family_ == AF_INET) {
    port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    ok = setsockopt(fd_, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) == 0 &&
         setsockopt(fd_, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) == 0;
    int pmtu = IP_PMTUDISC_PROBE;  // DF set, our own packet sizes (ngtcp2 probes the path)
    setsockopt(fd_, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
  } else if (family_ == AF_INET6) {
    port_ = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    ok = setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) == 0 &&
         setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one)) == 0;
    int pmtu = IPV6_PMTUDISC_PROBE;
    setsockopt(fd_, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
  } else {
    return common::invalidArgument("a QUIC listener must be an IPv4 or IPv6 UDP socket");
  }
  if (!ok) return common::errnoStatus(errno, "setsockopt on a UDP listener");
  // Best effort: the kernel caps these at net.core.{r,w}mem_max.
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &kBufferBytes, sizeof(kBufferBytes));
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &kBufferBytes, sizeof(kBufferBytes));
  return common::okStatus();
}

size_t UdpSocket::receive(std::span<Datagram> out) {
  size_t want = std::min(out.size(), kBatch);
  mmsghdr msgs[kBatch];
  iovec iovs[kBatch];
  alignas(cmsghdr) uint8_t control[kBatch][kControlSpace];
  for (size_t i = 0; i < want; ++i) {
    iovs[i] = iovec{buffers_.get() + i * kMaxDatagram, kMaxDatagram};
    msghdr& m = msgs[i].msg_hdr;
    m = msghdr{};
    m.msg_name = &out[i].remote.storage;
    m.msg_namelen = sizeof(out[i].remote.storage);
    m.msg_iov = &iovs[i];
    m.msg_iovlen = 1;
    m.msg_control = control[i];
    m.msg_controllen = kControlSpace;
    msgs[i].msg_len = 0;
  }
  int n;
  do {
    n = ::recvmmsg(fd_, msgs, static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return 0;
  size_t kept = 0;
  for (int i = 0; i < n; ++i) {
    msghdr& m = msgs[i].msg_hdr;
    if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) continue;  // too big: not ours to guess
    Datagram& d = out[kept];
    if (static_cast<size_t>(i) != kept) d.remote = out[i].remote;
    d.remote.len = m.msg_namelen;
    d.data = static_cast<const uint8_t*>(m.msg_iov->iov_base);
    d.len = msgs[i].msg_len;
    d.ecn = 0;
    d.local = SocketAddress{};
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
        in_pktinfo info;
        std::memcpy(&info, CMSG_DATA(c), sizeof(info));
        auto* local = reinterpret_cast<sockaddr_in*>(&d.local.storage);
        local->sin_family = AF_INET;
        local->sin_addr = info.ipi_addr;
        d.local.len = sizeof(sockaddr_in);
      } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
        in6_pktinfo info;
        std::memcpy(&info, CMSG_DATA(c), sizeof(info));
        auto* local = reinterpret_cast<sockaddr_in6*>(&d.local.storage);
        local->sin6_family = AF_INET6;
        local->sin6_addr = info.ipi6_addr;
        d.local.len = sizeof(sockaddr_in6);
      } else if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) ||
                 (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS)) {
        // IP_TOS arrives as one byte, IPV6_TCLASS as an int; ECN is the low two bits.
        d.ecn = static_cast<uint8_t>(*CMSG_DATA(c) & 0x3);
      }
    }
    if (d.local.len == 0) continue;  // no destination address: cannot answer correctly
    setPort(d.local, port_);
    stats_.datagrams_in += 1;
    stats_.bytes_in += d.len;
    ++kept;
  }
  return kept;
}

void UdpSocket::send(const ngtcp2_addr& local, const ngtcp2_addr& remote, uint8_t ecn,
                     const uint8_t* data, size_t len, size_t segment) noexcept {
  if (len == 0) return;
  if (segment == 0 || segment > len) segment = len;
  if (len > segment && !gso_) {
    for (size_t off = 0; off < len; off += segment) {
      sendOne(local, remote, ecn, data + off, std::min(segment, len - off), segment);
    }
    return;
  }
  if (!sendOne(local, remote, ecn, data, len, segment) && len > segment && !gso_) {
    // GSO was just found unusable: the same train, one datagram at a time.
    send(local, remote, ecn, data, len, segment);
  }
}

bool UdpSocket::sendOne(const ngtcp2_addr& local, const ngtcp2_addr& remote, uint8_t ecn,
                        const uint8_t* data, size_t len, size_t segment) {
  iovec iov{const_cast<uint8_t*>(data), len};
  msghdr m{};
  m.msg_name = remote.addr;
  m.msg_namelen = remote.addrlen;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) uint8_t control[kControlSpace] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof(control);
  size_t used = 0;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  // Answer from the address the client sent to (a wildcard socket may have several).
  if (local.addr->sa_family == AF_INET) {
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(in_pktinfo));
    in_pktinfo info{};
    info.ipi_spec_dst = reinterpret_cast<const sockaddr_in*>(local.addr)->sin_addr;
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
    info.ipi6_addr = reinterpret_cast<const sockaddr_in6*>(local.addr)->sin6_addr;
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
  m.msg_controllen = used;
  ssize_t n;
  do {
    n = ::sendmsg(fd_, &m, 0);
    ++stats_.send_calls;
  } while (n < 0 && errno == EINTR);
  if (n >= 0) {
    stats_.datagrams_out += (len + segment - 1) / segment;
    stats_.bytes_out += len;
    return true;
  }
  if (errno == EIO && len > segment) {
    LOG_NOTICE("UDP GSO refused by the kernel (%s): sending datagrams one by one", strerror(errno));
    gso_ = false;
    return false;
  }
  // EAGAIN (socket buffer full) and unreachable paths (a migration's old address) alike:
  // the packets are lost as far as QUIC knows, and its loss recovery resends.
  stats_.send_errors += 1;
  return true;
}

}  // namespace scalws::worker::quic
