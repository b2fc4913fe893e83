#include "worker/net/proxy_protocol.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/net/port_number.h"

namespace scalws::worker {
namespace {

constexpr std::string_view kV1Prefix = "PROXY ";
constexpr std::string_view kV2Signature("\r\n\r\n\0\r\nQUIT\n", 12);

ProxyHeader invalid() {
  ProxyHeader h;
  h.outcome = ProxyHeader::Outcome::kInvalid;
  return h;
}

// The next space-separated field of `line` (which it consumes, with the space).
std::string_view nextField(std::string_view& line) {
  size_t space = line.find(' ');
  std::string_view field = line.substr(0, space);
  line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  return field;
}

bool parseAddress(std::string_view text, int family, void* out) {
  char buf[INET6_ADDRSTRLEN];
  if (text.empty() || text.size() >= sizeof(buf)) return false;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  return inet_pton(family, buf, out) == 1;
}

ProxyHeader parseV1(std::string_view bytes) {
  size_t end = bytes.find("\r\n");
  if (end == std::string_view::npos) {
    // A bare LF or CR inside is never valid; past the limit without CRLF neither.
    if (bytes.size() >= kProxyV1Max || bytes.find('\n') != std::string_view::npos) {
      return invalid();
    }
    return ProxyHeader{};
  }
  if (end + 2 > kProxyV1Max) return invalid();
  std::string_view line = bytes.substr(kV1Prefix.size(), end - kV1Prefix.size());
  if (line.find('\r') != std::string_view::npos) return invalid();
  ProxyHeader h;
  h.outcome = ProxyHeader::Outcome::kDone;
  h.length = end + 2;
  std::string_view protocol = nextField(line);
  if (protocol == "UNKNOWN") return h;  // the rest, if any, is to be ignored
  int family = protocol == "TCP4" ? AF_INET : protocol == "TCP6" ? AF_INET6 : AF_UNSPEC;
  if (family == AF_UNSPEC) return invalid();
  std::string_view source = nextField(line);
  std::string_view destination = nextField(line);
  std::string_view source_port = nextField(line);
  std::string_view destination_port = line;
  uint16_t sport = 0;
  uint16_t dport = 0;
  unsigned char scratch[16];
  if (destination_port.find(' ') != std::string_view::npos ||
      !common::net::parsePortNumber(source_port, sport) ||
      !common::net::parsePortNumber(destination_port, dport) ||
      !parseAddress(destination, family, scratch)) {
    return invalid();
  }
  if (family == AF_INET) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&h.client);
    if (!parseAddress(source, AF_INET, &sin->sin_addr)) return invalid();
    sin->sin_family = AF_INET;
    sin->sin_port = htons(sport);
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&h.client);
    if (!parseAddress(source, AF_INET6, &sin6->sin6_addr)) return invalid();
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(sport);
  }
  h.has_client = true;
  return h;
}

ProxyHeader parseV2(std::string_view bytes) {
  if (bytes.size() < 16) return ProxyHeader{};
  auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  uint8_t version = byte(12) >> 4;
  uint8_t command = byte(12) & 0x0f;
  if (version != 2 || command > 1) return invalid();
  size_t length = 16 + ((static_cast<size_t>(byte(14)) << 8) | byte(15));
  if (length > kProxyV2Max) return invalid();
  uint8_t family = byte(13) >> 4;
  uint8_t transport = byte(13) & 0x0f;
  if (family > 3 || transport > 2) return invalid();
  // The addresses' room, by family: INET 12, INET6 36, UNIX 216 bytes.
  static constexpr size_t kAddressBytes[] = {0, 12, 36, 216};
  if (length - 16 < kAddressBytes[family]) return invalid();
  if (bytes.size() < length) return ProxyHeader{};
  ProxyHeader h;
  h.outcome = ProxyHeader::Outcome::kDone;
  h.length = length;
  // LOCAL: the balancer speaks for itself (a health check); unspecified or unix: no
  // address we could use.
  if (command == 0 || transport == 0 || (family != 1 && family != 2)) return h;
  const char* a = bytes.data() + 16;
  if (family == 1) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&h.client);
    sin->sin_family = AF_INET;
    std::memcpy(&sin->sin_addr, a, 4);
    std::memcpy(&sin->sin_port, a + 8, 2);  // network order on both sides
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&h.client);
    sin6->sin6_family = AF_INET6;
    std::memcpy(&sin6->sin6_addr, a, 16);
    std::memcpy(&sin6->sin6_port, a + 32, 2);
  }
  h.has_client = true;
  return h;
}

}  // namespace

ProxyHeader parseProxyHeader(std::string_view bytes) {
  if (bytes.empty()) return ProxyHeader{};
  if (bytes.front() == 'P') {
    size_t n = std::min(bytes.size(), kV1Prefix.size());
    if (bytes.substr(0, n) != kV1Prefix.substr(0, n)) return invalid();
    return bytes.size() < kV1Prefix.size() ? ProxyHeader{} : parseV1(bytes);
  }
  size_t n = std::min(bytes.size(), kV2Signature.size());
  if (bytes.substr(0, n) != kV2Signature.substr(0, n)) return invalid();
  return bytes.size() < kV2Signature.size() ? ProxyHeader{} : parseV2(bytes);
}

}  // namespace scalws::worker
