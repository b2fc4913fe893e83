// Datagram I/O on one bound UDP socket of a QUIC listener: recvmmsg in batches (with the
// destination address from IP_PKTINFO, since a wildcard-bound socket must answer from the
// address the client used, and the ECN bits), and sends with UDP_SEGMENT (GSO) so a train
// of equal-sized packets is one message. Sends are queued and go out together in one
// sendmmsg at flush(): a loop turn that answers many connections makes one system call
// for all their trains instead of one each (system calls are what a QUIC server spends
// most on outside its libraries). The listener flushes after each batch it reads and
// before the loop waits. GSO is dropped for good the first time the kernel refuses it
// (EIO: a device without checksum offload).
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
  uint64_t send_calls = 0;   // system calls: one per flush of the queue, more only on errors
};

class UdpSocket final : public DatagramSender {
 public:
  static constexpr size_t kBatch = 32;
  static constexpr size_t kMaxDatagram = common::net::kMaxQuicDatagram;
  // The send queue: messages (trains) and bytes. kMinSpace holds the largest train a
  // connection writes (64 segments of an Ethernet-sized packet).
  static constexpr size_t kQueueMessages = 64;
  static constexpr size_t kQueueBytes = 256 * 1024;
  static constexpr size_t kMinSpace = 96 * 1024;

  explicit UdpSocket(int fd);
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  // Asks the kernel for destination addresses and ECN bits on receive, larger buffers and
  // no fragmentation (RFC 9000 §14: QUIC datagrams must not be fragmented).
  common::Status configure();

  // Reads up to out.size() (≤ kBatch) datagrams; their bytes stay valid until the next
  // call. Returns how many; 0 when nothing is waiting.
  size_t receive(std::span<Datagram> out);

  // Queues the train (written in place at sendSpace(), or copied in); sends the queue
  // when it is full.
  void send(const ngtcp2_addr& local, const ngtcp2_addr& remote, uint8_t ecn, const uint8_t* data,
            size_t len, size_t segment) noexcept override;
  // At least kMinSpace bytes.
  std::span<uint8_t> sendSpace() noexcept override;
  // Sends what is queued, in order.
  void flush() noexcept;
  size_t queued() const { return queue_count_; }

  int fd() const { return fd_; }
  uint16_t port() const { return port_; }
  const UdpSocketStats& stats() const { return stats_; }
  bool gso() const { return gso_; }
  // As after the kernel refused a GSO train (EIO): one datagram per call from now on.
  void disableGsoForTest() { gso_ = false; }

 private:
  struct Queued {
    SocketAddress local;
    SocketAddress remote;
    size_t offset = 0;  // in queue_bytes_
    size_t len = 0;
    size_t segment = 0;
    uint8_t ecn = 0;
  };

  // One datagram per call: a train once the kernel refused GSO.
  void sendSplit(const Queued& q);
  void sendOne(const Queued& q, const uint8_t* data, size_t len);

  int fd_;
  int family_ = AF_INET;
  uint16_t port_ = 0;
  bool gso_ = true;
  UdpSocketStats stats_;
  std::unique_ptr<uint8_t[]> buffers_;  // kBatch × kMaxDatagram
  std::unique_ptr<uint8_t[]> queue_bytes_;
  size_t queue_used_ = 0;
  std::unique_ptr<Queued[]> queue_;  // kQueueMessages
  size_t queue_count_ = 0;
};

}  // namespace scalws::worker::quic
