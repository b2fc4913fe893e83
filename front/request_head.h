// The host a plain-HTTP client asks for, read from the first bytes of its connection: the
// authority of an absolute-form request target (RFC 9112 §3.2.2), else the first Host field
// of the request head (§3.2). The front peeks and never consumes, so the instance's worker
// parses the same head again with its own strict codec (and refuses what is malformed);
// this parser only needs to be right about the host and to stop early on what is clearly
// not HTTP/1.x.
//
// It answers as soon as the host is known: after the request line for an absolute-form
// target, after the Host line otherwise, so a head that trickles in is routed once its
// Host arrived. A head that ends without Host (HTTP/1.0) is kNoHost; the HTTP/2 connection
// preface (h2c with prior knowledge, RFC 9113 §3.3) is kH2cPreface. Lines must end in CRLF
// (a bare LF, a control byte or a request line that is not METHOD SP TARGET SP HTTP/D.D is
// kInvalid), and nothing past `max_head` bytes is looked at (kTooLarge).
//
// Pure: no socket, no allocation but the host found.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace scalws::front {

inline constexpr size_t kMaxRequestHead = 16 * 1024;

struct HostPeek {
  enum class Outcome {
    kNeedMore,    // a consistent prefix: wait for more bytes
    kHost,        // `host`: lower-case, without port or trailing dot
    kNoHost,      // the head (or its authority) names no host name: an IP literal, none
    kH2cPreface,  // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    kInvalid,     // not an HTTP/1.x request head
    kTooLarge,    // no host within max_head bytes
  };
  Outcome outcome = Outcome::kNeedMore;
  std::string host;
};

HostPeek peekRequestHost(std::string_view bytes, size_t max_head = kMaxRequestHead);

}  // namespace scalws::front
