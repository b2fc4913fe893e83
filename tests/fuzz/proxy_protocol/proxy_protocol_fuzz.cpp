// Fuzz target: the first bytes of a connection on a proxy_protocol listener, as the PROXY
// header parser judges them. Whatever the input: no crash; a header is never longer than
// its version allows nor than the input; every shorter prefix of an accepted header asks
// for more; the same bytes fed in growing prefixes reach the same verdict; and a client
// address is always an IPv4 or IPv6 one.
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "worker/net/proxy_protocol.h"

using scalws::worker::kProxyV1Max;
using scalws::worker::kProxyV2Max;
using scalws::worker::parseProxyHeader;
using scalws::worker::ProxyHeader;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ProxyHeader whole = parseProxyHeader(bytes);
  if (whole.outcome == ProxyHeader::Outcome::kDone) {
    if (whole.length == 0 || whole.length > size) std::abort();
    size_t bound = bytes.front() == 'P' ? kProxyV1Max : kProxyV2Max;
    if (whole.length > bound) std::abort();
    if (whole.has_client && whole.client.ss_family != AF_INET &&
        whole.client.ss_family != AF_INET6) {
      std::abort();
    }
    if (parseProxyHeader(bytes.substr(0, whole.length - 1)).outcome !=
        ProxyHeader::Outcome::kNeedMore) {
      std::abort();
    }
    ProxyHeader exact = parseProxyHeader(bytes.substr(0, whole.length));
    if (exact.outcome != ProxyHeader::Outcome::kDone || exact.length != whole.length) std::abort();
  }
  // The verdict a reader reaches as bytes trickle in is the one the whole input gives.
  for (size_t n = 1; n <= size && n <= kProxyV2Max + 1; ++n) {
    ProxyHeader p = parseProxyHeader(bytes.substr(0, n));
    if (p.outcome == ProxyHeader::Outcome::kNeedMore) continue;
    if (p.outcome != whole.outcome) std::abort();
    if (p.outcome == ProxyHeader::Outcome::kDone && p.length != whole.length) std::abort();
    break;
  }
  return 0;
}
