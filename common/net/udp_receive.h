// Receiving on a bound UDP socket that answers from the address each client used: the
// destination address of every datagram (IP_PKTINFO, since a wildcard-bound socket has
// several) and its ECN bits, read in batches with recvmmsg.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/net/datagram.h"
#include "common/status.h"

namespace scalws::common::net {

inline constexpr size_t kMaxReceiveBatch = 32;

struct UdpBinding {
  int family = 0;  // AF_INET or AF_INET6
  uint16_t port = 0;
};

// Asks the kernel for destination addresses and ECN bits, and a larger receive buffer
// (best effort: net.core.rmem_max caps it). Returns what the socket is bound to.
Result<UdpBinding> enableDatagramInfo(int fd);

// Reads up to min(out.size(), kMaxReceiveBatch) datagrams, the i-th into buffers + i ×
// max_datagram. A truncated datagram, or one without its destination address, is skipped.
// Returns how many `out` holds (0: nothing waiting); their bytes stay valid until the
// buffers are reused.
size_t receiveDatagrams(int fd, uint16_t port, std::span<Datagram> out, uint8_t* buffers,
                        size_t max_datagram);

}  // namespace scalws::common::net
