#include "controller/shared/handoff_channel.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>

#include "common/hex.h"

namespace scalws::controller {

namespace {

// Room for this many hand-offs waiting in a worker loop's queue (each is one small
// message); a busy loop catches up, and a full one is skipped for the next.
constexpr int kChannelBuffer = 4 * 1024 * 1024;

std::string hexName(const sockaddr_un& addr, socklen_t len) {
  size_t name_len = len > sizeof(sa_family_t) ? len - sizeof(sa_family_t) : 0;
  if (name_len < 2 || addr.sun_path[0] != '\0') return "";
  return common::toHex(std::string_view(addr.sun_path + 1, name_len - 1));
}

}  // namespace

common::Result<HandoffChannel> HandoffChannel::make() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) != 0) {
    return common::errnoStatus(errno, "socketpair(SOCK_SEQPACKET)");
  }
  HandoffChannel channel{common::UniqueFd(fds[0]), common::UniqueFd(fds[1])};
  // The sender's buffer bounds what may wait for the worker; root may raise it past
  // wmem_max.
  int size = kChannelBuffer;
  if (::setsockopt(channel.send.get(), SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) != 0) {
    ::setsockopt(channel.send.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // Binding with only the family asks the kernel for a fresh abstract name ("autobind").
  if (::bind(channel.receive.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(sa_family_t)) != 0) {
    return common::errnoStatus(errno, "naming a hand-off channel");
  }
  return channel;
}

std::string receivingEndName(int receive_fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(receive_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  return hexName(addr, len);
}

std::string sendingEndPeer(int send_fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(send_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  return hexName(addr, len);
}

bool isChannelEnd(int fd) {
  int type = 0;
  int domain = 0;
  socklen_t len = sizeof(type);
  socklen_t domain_len = sizeof(domain);
  return ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET &&
         ::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &domain_len) == 0 && domain == AF_UNIX;
}

}  // namespace scalws::controller
