#include "worker/server/listen_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace scalws::worker {

common::Result<int> openListenSocket(const common::config::ListenConfig& listen) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = AF_INET;
  if (listen.host.find(':') != std::string::npos) {
    family = AF_INET6;
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(listen.port);
    if (inet_pton(AF_INET6, listen.host.c_str(), &a6->sin6_addr) != 1) {
      return common::invalidArgument(listen.where.toString() + ": bad IPv6 address " + listen.host);
    }
    len = sizeof(sockaddr_in6);
  } else {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
    a4->sin_family = AF_INET;
    a4->sin_port = htons(listen.port);
    if (inet_pton(AF_INET, listen.host.c_str(), &a4->sin_addr) != 1) {
      return common::invalidArgument(listen.where.toString() + ": bad IPv4 address " + listen.host);
    }
    len = sizeof(sockaddr_in);
  }
  int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return common::errnoStatus(errno, "socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    int err = errno;
    ::close(fd);
    return common::errnoStatus(err, listen.where.toString() + ": cannot bind " + listen.address);
  }
  if (::listen(fd, 4096) != 0) {
    int err = errno;
    ::close(fd);
    return common::errnoStatus(err, "listen on " + listen.address);
  }
  return fd;
}

}  // namespace scalws::worker
