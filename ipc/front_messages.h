// The messages of the controller <-> front channel (a front is the process that accepts on
// an address several instances share and hands each connection to its instance's worker;
// front/). One struct per op's args, with the encoder and decoder both ends use.
//
// The conversation (every request is answered; ops in ops.h):
//   front -> front.hello    FrontHelloArgs    pid, address, attach_address (spawned) or its
//                                             state, settings and fd numbers (attached)
//   ctl   -> front.config   FrontConfigArgs   + one fd: the listening socket (bound by the
//                                             controller, SO_REUSEPORT, one per front), and
//                                             with settings.quic a second: the UDP socket
//                                             every datagram of the address reaches
//   front -> front.ready    FrontReadyArgs    it accepts (sandbox report), or why not
//   ctl   -> front.route    FrontRouteArgs    + one fd per channel: an instance's names and
//                                             the sockets its workers receive connections
//                                             on (replaces what the front had for it)
//   ctl   -> front.unroute  {instance}        the instance's names go to nobody
//   ctl   -> front.stop     {}                stop accepting and exit once nothing waits
//   front -> front.metrics  FrontMetricsArgs  notification, about once a second
//   ctl   -> front.stderr   {} + one fd       a re-attached front's new stdout and stderr
// A channel is one end of a SOCK_SEQPACKET socketpair: each hand-off is one message of one
// byte with the client's descriptor (SCM_RIGHTS); the other end is a worker loop's.
//
// As with the worker channel, wire names are stable (a front started by an older
// controller is re-attached by a newer one) and decoders refuse a wrong type, a missing
// field or an out-of-range number, naming the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ipc/message.h"
#include "ipc/sandbox_summary.h"

namespace scalws::ipc {

// Routes an instance may have on one address, at most (its worker loops).
inline constexpr size_t kMaxFrontChannels = 4096;
// Names one instance may claim on one address, at most.
inline constexpr size_t kMaxFrontNames = 4096;

// What a front is told to be.
struct FrontSettings {
  std::string address;  // "127.0.0.1:443", as the [[listen]] entries write it
  uint16_t port = 0;
  bool tls = false;  // TLS: route by SNI; plain: by Host
  uint32_t slot = 0;
  uint64_t header_timeout_ms = 10'000;  // the first bytes must name a host by then
  uint32_t max_waiting = 1024;          // connections still being peeked at, at most
  std::string user;                     // who it runs as
  // HTTP/3 too: front.config carries the address's UDP socket after the TCP one, and the
  // front passes each datagram to its connection's worker loop (forwarded_datagram.h).
  bool quic = false;

  friend bool operator==(const FrontSettings&, const FrontSettings&) = default;
};

struct FrontHelloArgs {
  struct Attached {
    bool stopping = false;
    FrontSettings settings;
    int listener_fd = -1;          // its listening socket, in its own fd table
    std::vector<int> channel_fds;  // every channel it holds (the controller matches them)
    int udp_fd = -1;               // its UDP socket (settings.quic)
  };
  int64_t pid = 0;
  std::string address;
  std::string attach_address;  // hex of the abstract name; "" without an attach socket
  std::optional<Attached> attached;

  Json encode() const;
  static common::Result<FrontHelloArgs> decode(const Json& args);
};

struct FrontConfigArgs {
  FrontSettings settings;
  uint64_t controller_uid = 0;  // who may attach later besides root

  Json encode() const;
  static common::Result<FrontConfigArgs> decode(const Json& args);
};

struct FrontReadyArgs {
  bool ok = false;
  std::string error;  // when !ok
  int64_t pid = 0;
  SandboxSummary sandbox;

  Json encode() const;
  static common::Result<FrontReadyArgs> decode(const Json& args);
};

struct FrontChannel {
  uint32_t slot = 0;
  uint32_t loop = 0;
  friend bool operator==(const FrontChannel&, const FrontChannel&) = default;
};

// An instance's entry in the front's table. `channels[i]` describes the i-th fd. An
// instance with more channels than one frame carries (kMaxFdsPerFrame) is sent in parts:
// every part but the last says `more`, and the front puts the entry in force with the last.
struct FrontRouteArgs {
  std::string instance;
  std::vector<std::string> names;  // lower-case, "*.example.com" for one label
  bool is_default = false;
  std::vector<FrontChannel> channels;  // none: its names are known but nobody serves them
  bool more = false;

  Json encode() const;
  static common::Result<FrontRouteArgs> decode(const Json& args);
};

// The counters a front keeps (totals since it started) and the one gauge: name, then
// what it counts.
#define SCALWS_FRONT_COUNTERS(X)                                                         \
  X(accepted, "connections accepted")                                                    \
  X(handed_off, "connections handed to a worker")                                        \
  X(unknown_name, "connections for a name nobody claims, without a default")             \
  X(unavailable, "connections for a name whose instance has no worker up")               \
  X(peek_timeouts, "connections that named no host within the header timeout")           \
  X(invalid, "connections whose first bytes were not a ClientHello or an HTTP/1.x head") \
  X(h2c_refused, "h2c prior-knowledge connections without a default instance")           \
  X(queue_full, "connections refused because every worker's queue was full")             \
  X(evicted, "waiting connections closed to make room for new ones")                     \
  X(quic_routed, "QUIC connections sent to a worker by the name in their first Initial") \
  X(quic_forwarded, "QUIC datagrams passed to a worker")                                 \
  X(quic_dropped, "QUIC datagrams no worker took: unknown, undecryptable or queue full")

struct FrontCounters {
#define SCALWS_FRONT_FIELD(name, help) uint64_t name = 0;
  SCALWS_FRONT_COUNTERS(SCALWS_FRONT_FIELD)
#undef SCALWS_FRONT_FIELD
  uint64_t waiting = 0;  // gauge: connections being peeked at now

  FrontCounters& operator+=(const FrontCounters& other);
  Json toJson() const;
  friend bool operator==(const FrontCounters&, const FrontCounters&) = default;
};

struct FrontMetricsArgs {
  int64_t pid = 0;
  uint32_t slot = 0;
  FrontCounters counters;
  // Hand-offs per instance (totals since the front started), for the instances it routes.
  std::vector<std::pair<std::string, uint64_t>> handoffs;

  Json encode() const;
  static common::Result<FrontMetricsArgs> decode(const Json& args);
};

}  // namespace scalws::ipc
