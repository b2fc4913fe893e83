// Reads a PROXY protocol header (proxy_protocol.h) off a new connection's socket without
// taking a byte of what follows it (the client's TLS ClientHello or first request): the
// bytes are peeked first, and only the header's are consumed. What a verdict needs more
// of is consumed as it comes (it is all header), so a balancer that sends its header in
// pieces costs no busy polling.
#pragma once

#include <cstddef>

#include "worker/net/proxy_protocol.h"

namespace scalws::worker {

class ProxyHeaderReader {
 public:
  enum class Result { kNeedMore, kDone, kFailed };

  // Call when the socket is readable. kFailed: a malformed header, an end of stream or a
  // socket error (close the connection).
  Result read(int fd);
  // After kDone.
  const ProxyHeader& header() const { return header_; }

 private:
  char buf_[kProxyHeaderMax];
  size_t have_ = 0;
  ProxyHeader header_;
};

}  // namespace scalws::worker
