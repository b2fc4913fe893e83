#include "controller/instances/instance_listeners.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "common/net/listen_socket.h"
#include "common/net/quic_steering.h"

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
  if (!probe.ok()) return probe.status();
  if (!listen.http3) return common::okStatus();
  // The UDP port too: a group someone else started would take our sockets in, and with
  // them the places the steering ids count on.
  Result<UniqueFd> udp = common::net::bindUdpSocket(listen, false);
  return udp.ok() ? common::okStatus() : udp.status();
}

Result<UniqueFd> bindListener(const common::config::ListenConfig& listen) {
  return common::net::openListenSocket(listen);
}

namespace {

std::vector<ListenerSpec> directSpecs(const common::config::SiteConfig& site, uint32_t loops,
                                      uint32_t first_steering, const std::set<size_t>& shared) {
  std::vector<ListenerSpec> out;
  for (uint32_t loop = 0; loop < loops; ++loop) {
    for (size_t i = 0; i < site.listens.size(); ++i) {
      if (shared.count(i) != 0) continue;
      const common::config::ListenConfig& listen = site.listens[i];
      out.push_back(ListenerSpec{loop, listen.address, listen.port, listen.tls.has_value()});
      if (!listen.http3) continue;
      ListenerSpec udp{loop, listen.address, listen.port, true};
      udp.quic = true;
      udp.steering = first_steering + loop;
      out.push_back(std::move(udp));
    }
  }
  return out;
}

}  // namespace

std::vector<ListenerSpec> slotListenerSpecs(const common::config::SiteConfig& site, uint32_t loops,
                                            uint32_t first_steering,
                                            const std::set<size_t>& shared) {
  std::vector<ListenerSpec> out = directSpecs(site, loops, first_steering, shared);
  for (uint32_t loop = 0; loop < loops; ++loop) {
    for (size_t i : shared) {
      const common::config::ListenConfig& listen = site.listens[i];
      ListenerSpec spec{loop, listen.address, listen.port, listen.tls.has_value()};
      spec.handoff = true;
      out.push_back(spec);
      if (!listen.http3) continue;
      spec.quic = true;  // its UDP socket, which only sends
      out.push_back(std::move(spec));
    }
  }
  return out;
}

Result<SlotListeners> bindSlotListeners(const common::config::SiteConfig& site, uint32_t loops,
                                        uint32_t first_steering, const std::set<size_t>& shared) {
  SlotListeners out;
  for (uint32_t loop = 0; loop < loops; ++loop) {
    for (size_t i = 0; i < site.listens.size(); ++i) {
      if (shared.count(i) != 0) continue;
      const common::config::ListenConfig& listen = site.listens[i];
      Result<UniqueFd> fd = bindListener(listen);
      if (!fd.ok()) return fd.status();
      out.fds.push_back(std::move(*fd));
      if (!listen.http3) continue;
      Result<UniqueFd> udp = common::net::bindSteeredSocket(listen);
      if (!udp.ok()) return udp.status();
      out.fds.push_back(std::move(*udp));
    }
  }
  // The same walk as slotListenerSpecs: specs[i] describes fds[i].
  out.specs = directSpecs(site, loops, first_steering, shared);
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
