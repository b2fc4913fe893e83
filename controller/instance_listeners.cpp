#include "controller/instance_listeners.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

namespace scalws::controller {

using common::Result;
using common::UniqueFd;

ipc::Json SlotListeners::toJson() const {
  ipc::Json list = ipc::Json::array();
  for (const ListenerSpec& s : specs) {
    list.push_back({{"loop", s.loop}, {"address", s.address}, {"port", s.port}, {"tls", s.tls}});
  }
  return {{"listeners", list}};
}

Result<std::vector<UniqueFd>> SlotListeners::duplicateFds() const {
  std::vector<UniqueFd> out;
  for (const UniqueFd& fd : fds) {
    Result<UniqueFd> copy = UniqueFd::duplicate(fd.get());
    if (!copy.ok()) return copy.status();
    out.push_back(std::move(*copy));
  }
  return out;
}

namespace {

Result<UniqueFd> bindSocket(const common::config::ListenConfig& listen, bool reuse_port) {
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
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return common::errnoStatus(errno, "socket");
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (reuse_port) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (family == AF_INET6) setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    int err = errno;
    if (err == EADDRINUSE) {
      return common::Status(common::StatusCode::kAlreadyExists,
                            listen.address + " is already in use by another process");
    }
    return common::errnoStatus(err, "cannot bind " + listen.address);
  }
  return fd;
}

}  // namespace

common::Status checkAddressFree(const common::config::ListenConfig& listen) {
  Result<UniqueFd> probe = bindSocket(listen, false);
  return probe.ok() ? common::okStatus() : probe.status();
}

Result<UniqueFd> bindListener(const common::config::ListenConfig& listen) {
  Result<UniqueFd> bound = bindSocket(listen, true);
  if (!bound.ok()) return bound.status();
  UniqueFd fd = std::move(bound).value();
  if (::listen(fd.get(), 4096) != 0) {
    return common::errnoStatus(errno, "listen on " + listen.address);
  }
  return fd;
}

Result<SlotListeners> bindSlotListeners(const common::config::SiteConfig& site, uint32_t loops) {
  SlotListeners out;
  for (uint32_t loop = 0; loop < loops; ++loop) {
    for (const common::config::ListenConfig& listen : site.listens) {
      Result<UniqueFd> fd = bindListener(listen);
      if (!fd.ok()) return fd.status();
      out.specs.push_back(ListenerSpec{loop, listen.address, listen.port, listen.tls.has_value()});
      out.fds.push_back(std::move(*fd));
    }
  }
  return out;
}

uint16_t boundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

}  // namespace scalws::controller
