#include "controller/instances/instance_listeners.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "common/net/listen_socket.h"

namespace scalws::controller {

using common::Result;
using common::UniqueFd;

Result<std::vector<UniqueFd>> SlotListeners::duplicateFds() const {
  std::vector<UniqueFd> out;
  for (const UniqueFd& fd : fds) {
    Result<UniqueFd> copy = UniqueFd::duplicate(fd.get());
    if (!copy.ok()) return copy.status();
    out.push_back(std::move(*copy));
  }
  return out;
}

common::Status checkAddressFree(const common::config::ListenConfig& listen) {
  Result<UniqueFd> probe = common::net::bindTcpSocket(listen, false);
  return probe.ok() ? common::okStatus() : probe.status();
}

Result<UniqueFd> bindListener(const common::config::ListenConfig& listen) {
  return common::net::openListenSocket(listen);
}

std::vector<ListenerSpec> slotListenerSpecs(const common::config::SiteConfig& site,
                                            uint32_t loops) {
  std::vector<ListenerSpec> out;
  for (uint32_t loop = 0; loop < loops; ++loop) {
    for (const common::config::ListenConfig& listen : site.listens) {
      out.push_back(ListenerSpec{loop, listen.address, listen.port, listen.tls.has_value()});
    }
  }
  return out;
}

Result<SlotListeners> bindSlotListeners(const common::config::SiteConfig& site, uint32_t loops) {
  SlotListeners out;
  out.specs = slotListenerSpecs(site, loops);
  size_t per_loop = site.listens.size();
  for (size_t i = 0; i < out.specs.size(); ++i) {
    Result<UniqueFd> fd = bindListener(site.listens[i % per_loop]);
    if (!fd.ok()) return fd.status();
    out.fds.push_back(std::move(*fd));
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
