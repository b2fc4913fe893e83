// QuicFront: the UDP side of a front on an address where instances serve HTTP/3. Every
// datagram sent to the address reaches this socket (the controller attached a reuseport
// program that picks the group's first socket, common/net/quic_steering.h), and is passed
// on, whole, to one worker loop over the same channels TCP connections are handed over on
// (ipc/forwarded_datagram.h):
//
//   - a destination connection ID that starts with a route one of the table's channels
//     has (common/net/quic_route.h): to that channel. These are IDs a worker issued, so
//     every packet of an established connection, from whatever client address, reaches
//     the loop that holds it;
//   - a client's Initial with an ID it chose: its ClientHello is read from the Initial
//     (quic_initial.h; one or a few datagrams, held until the name is there) and the
//     instance claiming the name gets it, on one of its channels; the ID is remembered
//     for the client's other packets that still carry it;
//   - anything else is dropped. The front never answers a client itself: it holds no key.
//
// Bounds: at most kMaxPending handshakes being read (the oldest gives way), kMaxHeld
// datagrams each, and kMaxKnown remembered IDs, each forgotten kKnownTtlMs after its last
// use. A channel whose queue is full drops the datagram (QUIC resends).
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/net/datagram.h"
#include "common/net/quic_route.h"
#include "common/net/udp_receive.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "front/quic_initial.h"
#include "front/route_table.h"
#include "ipc/forwarded_datagram.h"
#include "ipc/front_messages.h"

namespace scalws::front {

class QuicFront {
 public:
  static constexpr size_t kMaxPending = 256;
  static constexpr size_t kMaxHeld = 4;
  static constexpr size_t kMaxKnown = 65536;
  static constexpr uint64_t kKnownTtlMs = 30'000;
  static constexpr uint64_t kPendingTtlMs = 5'000;

  using Handoffs = std::map<std::string, uint64_t, std::less<>>;

  // Asks the kernel for each datagram's destination address and ECN bits, and has OpenSSL
  // load what it needs: before the sandbox, which allows neither. `counters` and
  // `handoffs` (connections routed per instance) are the front's, shared with FrontLoop.
  static common::Result<std::unique_ptr<QuicFront>> create(uv_loop_t* loop, common::UniqueFd udp,
                                                           ipc::FrontCounters& counters,
                                                           Handoffs& handoffs);
  ~QuicFront();
  QuicFront(const QuicFront&) = delete;
  QuicFront& operator=(const QuicFront&) = delete;

  void start();
  void close();
  void setRoutes(std::shared_ptr<const RouteTable> routes);
  int fd() const { return udp_.get(); }
  size_t pendingForTest() const { return pending_.size(); }
  size_t knownForTest() const { return known_.size(); }

  // One datagram as received; `now_ms` on the loop's clock. What it passes on leaves at
  // flush(), with the others of its batch (the datagram's bytes must live until then).
  // Public for tests.
  void dispatch(const common::net::Datagram& datagram, uint64_t now_ms);
  void flush();

 private:
  struct Channel {
    common::net::QuicRoute route{};
    int fd = -1;
  };
  struct Pending {
    InitialReassembly hello;
    std::vector<std::string> held;  // messages to forward, header included
    uint64_t started_ms = 0;
  };
  struct Known {
    common::net::QuicRoute route{};
    uint64_t used_ms = 0;
  };
  // A datagram to pass on at flush(): its header here, its bytes still in the receive buffer.
  struct Outgoing {
    int fd = -1;
    uint8_t header[ipc::kForwardedHeader];
    const uint8_t* payload = nullptr;
    size_t len = 0;
  };
  static constexpr size_t kOutbox = common::net::kMaxReceiveBatch;

  QuicFront(uv_loop_t* loop, common::UniqueFd udp, ipc::FrontCounters& counters,
            Handoffs& handoffs);
  static void onReadable(uv_poll_t* handle, int status, int events);
  void receive();
  // The channel a new connection of `instance` goes to: one of its loops, chosen by the
  // client's first DCID (so its repeated Initials land together even when forgotten).
  const Channel* pick(const InstanceRoute& instance, std::span<const uint8_t> dcid) const;
  // The datagram as a channel message (ipc/forwarded_datagram.h); empty when it cannot be.
  static std::string encode(const common::net::Datagram& d);
  // Into the outbox (flushed first when full).
  void forward(int channel_fd, const common::net::Datagram& d);
  // A held message, at once.
  void send(int channel_fd, const std::string& message);
  void evictOldestPending();
  // Forgets expired handshakes and IDs, at most once a second unless `force`.
  void sweep(uint64_t now_ms, bool force = false);

  uv_loop_t* loop_;
  common::UniqueFd udp_;
  ipc::FrontCounters& counters_;
  Handoffs& handoffs_;
  uint16_t port_ = 0;
  std::unique_ptr<uint8_t[]> buffers_;  // kMaxReceiveBatch × kMaxQuicDatagram
  uv_poll_t poll_{};
  bool closed_ = false;
  std::shared_ptr<const RouteTable> routes_ = std::make_shared<RouteTable>();
  std::map<common::net::QuicRoute, Channel> channels_;
  std::unordered_map<std::string, Pending> pending_;  // by the client's first DCID
  std::unordered_map<std::string, Known> known_;      // the same, once routed
  uint64_t last_sweep_ms_ = 0;
  std::array<Outgoing, kOutbox> outbox_;
  size_t outbox_count_ = 0;
};

}  // namespace scalws::front
