#include "common/net/udp_receive.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace scalws::common::net {
namespace {

constexpr int kReceiveBufferBytes = 4 * 1024 * 1024;
constexpr size_t kControlSpace = 128;  // pktinfo + TOS/TCLASS

void setPort(SocketAddress& a, uint16_t port) {
  if (a.storage.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&a.storage)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(&a.storage)->sin6_port = htons(port);
  }
}

}  // namespace

Result<UdpBinding> enableDatagramInfo(int fd) {
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    return errnoStatus(errno, "getsockname on a UDP socket");
  }
  UdpBinding binding;
  binding.family = bound.ss_family;
  int one = 1;
  bool ok = true;
  if (binding.family == AF_INET) {
    binding.port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    ok = setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) == 0 &&
         setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) == 0;
  } else if (binding.family == AF_INET6) {
    binding.port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    ok = setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) == 0 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one)) == 0;
  } else {
    return invalidArgument("a QUIC socket must be an IPv4 or IPv6 UDP socket");
  }
  if (!ok) return errnoStatus(errno, "setsockopt on a UDP socket");
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kReceiveBufferBytes, sizeof(kReceiveBufferBytes));
  return binding;
}

size_t receiveDatagrams(int fd, uint16_t port, std::span<Datagram> out, uint8_t* buffers,
                        size_t max_datagram) {
  size_t want = std::min(out.size(), kMaxReceiveBatch);
  mmsghdr msgs[kMaxReceiveBatch];
  iovec iovs[kMaxReceiveBatch];
  alignas(cmsghdr) uint8_t control[kMaxReceiveBatch][kControlSpace];
  for (size_t i = 0; i < want; ++i) {
    iovs[i] = iovec{buffers + i * max_datagram, max_datagram};
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
    n = ::recvmmsg(fd, msgs, static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
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
    setPort(d.local, port);
    ++kept;
  }
  return kept;
}

}  // namespace scalws::common::net
