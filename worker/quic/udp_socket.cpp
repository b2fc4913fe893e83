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

UdpSocket::UdpSocket(int fd) : fd_(fd), buffers_(new uint8_t[kBatch * kMaxDatagram]) {}

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
