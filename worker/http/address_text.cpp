#include "worker/http/address_text.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>

#include "worker/http/decimal.h"

namespace scalws::worker {
namespace {

// a.b.c.d into `out` (room for 15); returns the length.
size_t writeDottedQuad(const uint8_t* octets, char* out) {
  size_t n = 0;
  for (int i = 0; i < 4; ++i) {
    if (i > 0) out[n++] = '.';
    n += formatDecimal(octets[i], out + n);
  }
  return n;
}

}  // namespace

std::string_view addressText(const sockaddr_storage& address, char (&buf)[kAddressTextSize],
                             MappedV4 mapped) {
  if (address.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&address);
    return {buf, writeDottedQuad(reinterpret_cast<const uint8_t*>(&sin->sin_addr), buf)};
  }
  if (address.ss_family != AF_INET6) return {};
  const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&address);
  if (mapped == MappedV4::kDotted && IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
    return {buf, writeDottedQuad(sin6->sin6_addr.s6_addr + 12, buf)};
  }
  if (inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf)) == nullptr) return {};
  return buf;
}

}  // namespace scalws::worker
