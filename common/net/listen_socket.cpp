#include "common/net/listen_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

namespace scalws::common::net {
namespace {

constexpr int kBacklog = 4096;

// The listener's address as a sockaddr; an error names the config location.
Status socketAddress(const config::ListenConfig& listen, sockaddr_storage& addr, socklen_t& len,
                     int& family) {
  addr = {};
  family = AF_INET;
  if (listen.host.find(':') != std::string::npos) {
    family = AF_INET6;
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(listen.port);
    if (inet_pton(AF_INET6, listen.host.c_str(), &a6->sin6_addr) != 1) {
      return invalidArgument(listen.where.toString() + ": bad IPv6 address " + listen.host);
    }
    len = sizeof(sockaddr_in6);
  } else {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
    a4->sin_family = AF_INET;
    a4->sin_port = htons(listen.port);
    if (inet_pton(AF_INET, listen.host.c_str(), &a4->sin_addr) != 1) {
      return invalidArgument(listen.where.toString() + ": bad IPv4 address " + listen.host);
    }
    len = sizeof(sockaddr_in);
  }
  return okStatus();
}

Status bindError(const config::ListenConfig& listen, int err, const char* what) {
  if (err == EADDRINUSE) {
    return Status(StatusCode::kAlreadyExists, listen.where.toString() + ": " + listen.address +
                                                  what + " is already in use by another process");
  }
  return errnoStatus(err, listen.where.toString() + ": cannot bind " + listen.address + what);
}

}  // namespace

Result<UniqueFd> bindTcpSocket(const config::ListenConfig& listen, bool reuse_port) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = AF_INET;
  Status ok = socketAddress(listen, addr, len, family);
  if (!ok.ok()) return ok;
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return errnoStatus(errno, "socket");
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (reuse_port) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (family == AF_INET6) setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  // Responses leave in one writev; Nagle would only delay pipelined ones. Set once here:
  // on Linux accepted sockets inherit it, which spares a setsockopt per connection.
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return bindError(listen, errno, "");
  }
  return fd;
}

Result<UniqueFd> bindUdpSocket(const config::ListenConfig& listen, bool reuse_port) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = AF_INET;
  Status ok = socketAddress(listen, addr, len, family);
  if (!ok.ok()) return ok;
  UniqueFd fd(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return errnoStatus(errno, "socket");
  int one = 1;
  if (reuse_port) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (family == AF_INET6) setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return bindError(listen, errno, " (UDP)");
  }
  return fd;
}

Result<UniqueFd> openListenSocket(const config::ListenConfig& listen) {
  Result<UniqueFd> bound = bindTcpSocket(listen, true);
  if (!bound.ok()) return bound.status();
  UniqueFd fd = std::move(bound).value();
  if (::listen(fd.get(), kBacklog) != 0) return errnoStatus(errno, "listen on " + listen.address);
  return fd;
}

}  // namespace scalws::common::net
