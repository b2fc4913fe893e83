#include "ipc/forwarded_datagram.h"

#include <netinet/in.h>

#include <cstring>

namespace scalws::ipc {
namespace {

// One address into its port, address and scope slots; false for another family.
bool putAddress(const sockaddr_storage& addr, socklen_t len, int family, uint8_t* port,
                uint8_t* address, uint8_t* scope) {
  if (addr.ss_family != family) return false;
  if (family == AF_INET) {
    if (len < sizeof(sockaddr_in)) return false;
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&addr);
    std::memcpy(port, &v4->sin_port, 2);  // network order on the wire too
    std::memcpy(address, &v4->sin_addr, 4);
    return true;
  }
  if (len < sizeof(sockaddr_in6)) return false;
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&addr);
  std::memcpy(port, &v6->sin6_port, 2);
  std::memcpy(address, &v6->sin6_addr, 16);
  std::memcpy(scope, &v6->sin6_scope_id, 4);
  return true;
}

socklen_t getAddress(int family, const uint8_t* port, const uint8_t* address, const uint8_t* scope,
                     sockaddr_storage& out) {
  std::memset(&out, 0, sizeof(out));
  if (family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
    v4->sin_family = AF_INET;
    std::memcpy(&v4->sin_port, port, 2);
    std::memcpy(&v4->sin_addr, address, 4);
    return sizeof(sockaddr_in);
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  v6->sin6_family = AF_INET6;
  std::memcpy(&v6->sin6_port, port, 2);
  std::memcpy(&v6->sin6_addr, address, 16);
  std::memcpy(&v6->sin6_scope_id, scope, 4);
  return sizeof(sockaddr_in6);
}

}  // namespace

bool encodeForwardedHeader(const common::net::Datagram& d, uint8_t* out) {
  std::memset(out, 0, kForwardedHeader);
  int family = d.remote.storage.ss_family;
  if (family != AF_INET && family != AF_INET6) return false;
  out[0] = kForwardedMagic;
  out[1] = d.ecn;
  out[2] = family == AF_INET ? 4 : 6;
  return putAddress(d.remote.storage, d.remote.len, family, out + 4, out + 8, out + 40) &&
         putAddress(d.local.storage, d.local.len, family, out + 6, out + 24, out + 44);
}

common::Status decodeForwardedDatagram(std::span<const uint8_t> message,
                                       common::net::Datagram& out) {
  if (message.size() <= kForwardedHeader || message[0] != kForwardedMagic || message[3] != 0 ||
      (message[2] != 4 && message[2] != 6) || message[1] > 3) {
    return common::Status(common::StatusCode::kInvalidArgument, "not a forwarded datagram");
  }
  const uint8_t* m = message.data();
  int family = m[2] == 4 ? AF_INET : AF_INET6;
  out.ecn = m[1];
  out.remote.len = getAddress(family, m + 4, m + 8, m + 40, out.remote.storage);
  out.local.len = getAddress(family, m + 6, m + 24, m + 44, out.local.storage);
  out.data = m + kForwardedHeader;
  out.len = message.size() - kForwardedHeader;
  return common::okStatus();
}

}  // namespace scalws::ipc
