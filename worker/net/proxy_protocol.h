// The PROXY protocol header (HAProxy's spec, versions 1 and 2) a load balancer sends
// before anything else on a connection, naming the client it accepted. A pure parser:
// bytes in, a verdict out; the socket side is ProxyHeaderReader.
//
// Strict: v1 is "PROXY TCP4|TCP6|UNKNOWN ..." ending in CRLF within 107 bytes, single
// spaces, addresses of the family named and decimal ports of at most 5 digits, 65535 the
// most; v2 is the 12-byte signature, version 2, command LOCAL or PROXY, a family and a
// length that fit (TLVs after the addresses are skipped), and at most kMaxV2 bytes in all.
// A LOCAL command (the balancer's own health check), UNKNOWN or an unspecified or unix
// family leaves the client unnamed: the connection's own peer stands.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <string_view>

namespace scalws::worker {

struct ProxyHeader {
  enum class Outcome { kNeedMore, kDone, kInvalid };
  Outcome outcome = Outcome::kNeedMore;
  size_t length = 0;        // kDone: the header's bytes (what follows is the client's)
  bool has_client = false;  // kDone: `client` names the source the balancer accepted
  sockaddr_storage client{};
};

// v1's whole line at most, CRLF included (the spec's limit).
inline constexpr size_t kProxyV1Max = 107;
// v2: the 16-byte fixed part and its TLVs; a balancer's TLVs (TLS facts, a VPC endpoint)
// stay well below.
inline constexpr size_t kProxyV2Max = 1024;
// The most a reader must look at before the verdict is known.
inline constexpr size_t kProxyHeaderMax = kProxyV2Max;

// Judges `bytes`, the connection's first bytes (all of them so far).
ProxyHeader parseProxyHeader(std::string_view bytes);

}  // namespace scalws::worker
