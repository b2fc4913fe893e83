#include "worker/http/real_ip.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <new>

#include "common/net/port_number.h"
#include "worker/config_snapshot.h"
#include "worker/http/header_field.h"

namespace scalws::worker {

bool parseForwardedAddress(std::string_view text, sockaddr_storage& out) {
  std::string_view host = text;
  uint16_t port = 0;
  bool v6 = false;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty() &&
        (rest.front() != ':' || !common::net::parsePortNumber(rest.substr(1), port))) {
      return false;
    }
    v6 = true;
  } else if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    if (text.find(':', colon + 1) != std::string_view::npos) {
      v6 = true;  // a bare IPv6 address: no port without brackets
    } else {
      host = text.substr(0, colon);
      if (!common::net::parsePortNumber(text.substr(colon + 1), port)) return false;
    }
  }
  char buf[INET6_ADDRSTRLEN];
  if (host.empty() || host.size() >= sizeof(buf)) return false;
  std::memcpy(buf, host.data(), host.size());
  buf[host.size()] = '\0';
  std::memset(&out, 0, sizeof(out));
  if (v6) {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&out);
    if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) != 1) return false;
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    return true;
  }
  auto* sin = reinterpret_cast<sockaddr_in*>(&out);
  if (inet_pton(AF_INET, buf, &sin->sin_addr) != 1) return false;
  sin->sin_family = AF_INET;
  sin->sin_port = htons(port);
  return true;
}

bool findRealClient(const common::config::RealIpConfig& config, const Request& r,
                    sockaddr_storage& client) {
  if (r.peer == nullptr || !addressInCidrs(r.peer->address, config.from)) return false;
  bool found = false;
  // Right to left: the last field line's last element is the hop nearest to us.
  for (size_t i = r.headers.size(); i-- > 0;) {
    if (!equalsIgnoreCase(r.headers[i].name, config.header)) continue;
    std::string_view list = r.headers[i].value;
    while (true) {
      size_t comma = list.rfind(',');
      std::string_view element =
          trimOws(comma == std::string_view::npos ? list : list.substr(comma + 1));
      if (!element.empty()) {
        sockaddr_storage address;
        if (!parseForwardedAddress(element, address)) return found;
        client = address;
        found = true;
        if (!addressInCidrs(address, config.from)) return true;
      }
      if (comma == std::string_view::npos) break;
      list = list.substr(0, comma);
    }
  }
  return found;
}

void applyRealIp(const common::config::RealIpConfig& config, Request& r) {
  sockaddr_storage client;
  if (!findRealClient(config, r, client)) return;
  // Not Arena::make, which takes trivially destructible types only: a PeerInfo holds the
  // shared_ptr of a shared address's names. This one is built without them (the 421 check
  // that reads them ran before [real_ip]), so never destroying it leaks nothing.
  static_assert(alignof(PeerInfo) <= 8);
  PeerInfo* real = new (r.arena->allocate(sizeof(PeerInfo))) PeerInfo();
  real->local_port = r.peer->local_port;
  real->tls = r.peer->tls;
  real->address = client;
  real->address_len = client.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  r.overridePeer(real);
}

}  // namespace scalws::worker
