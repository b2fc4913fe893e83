// Datagram I/O on one bound UDP socket of a QUIC listener: recvmmsg in batches (with the
// destination address from IP_PKTINFO, since a wildcard-bound socket must answer from the
// address the client used, and the ECN bits), and sendmsg with UDP_SEGMENT (GSO) so a
// train of equal-sized packets costs one system call. GSO is dropped for good the first
// time the kernel refuses it (EIO: a device without checksum offload).
//
// The fd stays owned by the caller (a supervising parent keeps it for a replacement
// worker). Loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "common/status.h"
#include "worker/quic/datagram.h"

namespace scalws::worker::quic {

struct UdpSocketStats {
  uint64_t datagrams_in = 0;
  uint64_t datagrams_out = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t send_errors = 0;  // EAGAIN included: QUIC's loss recovery resends
  uint64_t send_calls = 0;   // sendmsg calls: fewer than datagrams_out with GSO
};

class UdpSocket final : public DatagramSender {
 public:
  static constexpr size_t kBatch = 32;
  static constexpr size_t kMaxDatagram = common::net::kMaxQuicDatagram;

  explicit UdpSocket(int fd);
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  // Asks the kernel for destination addresses and ECN bits on receive, larger buffers and
  // no fragmentation (RFC 9000 §14: QUIC datagrams must not be fragmented).
  common::Status configure();

  // Reads up to out.size() (≤ kBatch) datagrams; their bytes stay valid until the next
  // call. Returns how many; 0 when nothing is waiting.
  size_t receive(std::span<Datagram> out);

  void send(const ngtcp2_addr& local, const ngtcp2_addr& remote, uint8_t ecn, const uint8_t* data,
            size_t len, size_t segment) noexcept override;

  int fd() const { return fd_; }
  uint16_t port() const { return port_; }
  const UdpSocketStats& stats() const { return stats_; }
  bool gso() const { return gso_; }
  // As after the kernel refused a GSO train (EIO): one datagram per call from now on.
  void disableGsoForTest() { gso_ = false; }

 private:
  bool sendOne(const ngtcp2_addr& local, const ngtcp2_addr& remote, uint8_t ecn,
               const uint8_t* data, size_t len, size_t segment);

  int fd_;
  int family_ = AF_INET;
  uint16_t port_ = 0;
  bool gso_ = true;
  UdpSocketStats stats_;
  std::unique_ptr<uint8_t[]> buffers_;  // kBatch × kMaxDatagram
};

}  // namespace scalws::worker::quic
