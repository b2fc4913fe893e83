// FrontLoop: accepts on a shared address and hands each connection to the worker of the
// instance its first bytes name, without consuming a byte.
//
// A connection's life in the front:
//   accept4 → peek (recv MSG_PEEK) → the ClientHello's SNI (TLS address) or the request
//   head's Host (plain) → the instance (RouteTable) → one of its channels: sendmsg of one
//   byte with the descriptor (SCM_RIGHTS) → close our copy.
// The listening socket has TCP_DEFER_ACCEPT (the controller set it), so a client is usually
// accepted with its first flight already there and is handed over in three calls (accept4,
// recvfrom, sendmsg) and a close. One whose bytes are still incomplete waits in an epoll set
// of its own (one epoll_ctl in, one out) until they are complete, at most the header
// timeout after it was accepted — counted from accept, so a client trickling a byte at a
// time gains nothing. At most `max_waiting` connections wait; past that the oldest is
// closed to make room (a flood of silent clients cannot keep the others out).
//
// What it refuses, then closes (what was peeked is read first, so the close is a FIN):
//   a name nobody claims without a default: TLS alert unrecognized_name, or 421 for HTTP;
//   an instance with no worker up, or every channel full: TLS alert internal_error, or 503;
//   not a ClientHello / not an HTTP/1.x head: nothing (TLS), 400 (HTTP), 431 when the head
//   names no host within its bound;
//   h2c with prior knowledge goes to the default instance, and is closed without one.
//
// Threading: one uv loop, single-threaded. The table is swapped with setRoutes() between
// two callbacks.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"
#include "front/client_hello.h"
#include "front/quic_front.h"
#include "front/route_table.h"
#include "ipc/front_messages.h"

namespace scalws::front {

class FrontLoop {
 public:
  // `listener`: the bound, listening, non-blocking socket (kept by the loop). The epoll set
  // for waiting clients is created here, before any sandbox.
  // `udp`: with settings.quic, the address's UDP socket (quic_front.h), else empty.
  static common::Result<std::unique_ptr<FrontLoop>> create(uv_loop_t* loop,
                                                           const ipc::FrontSettings& settings,
                                                           common::UniqueFd listener,
                                                           common::UniqueFd udp = {});
  ~FrontLoop();
  FrontLoop(const FrontLoop&) = delete;
  FrontLoop& operator=(const FrontLoop&) = delete;

  void start();
  // Stops accepting; `on_drained` fires once no connection waits any more (each is
  // handed over, refused or timed out), and the loop's handles are closed then.
  void drain(std::function<void()> on_drained);
  // Closes every waiting connection and the handles now. Idempotent.
  void closeNow();
  void setRoutes(std::shared_ptr<const RouteTable> routes);
  const RouteTable& routes() const { return *routes_; }

  const ipc::FrontCounters& counters() const { return counters_; }
  // Hand-offs per instance since the start (instances gone keep their count).
  const std::map<std::string, uint64_t, std::less<>>& handoffs() const { return handoffs_; }
  int listenerFd() const { return listener_.get(); }
  int udpFd() const { return quic_ ? quic_->fd() : -1; }

 private:
  struct Waiting {
    int fd = -1;
    uint64_t deadline = 0;
    Waiting* prev = nullptr;
    Waiting* next = nullptr;
  };
  enum class Refusal { kUnknownName, kUnavailable, kInvalid, kTooLarge, kNoH2c };
  // What the first bytes of a connection say should happen to it.
  struct Verdict {
    enum class Kind { kWait, kClose, kRoute, kRefuse } kind = Kind::kWait;
    InstanceRoute* target = nullptr;      // kRoute
    Refusal refusal = Refusal::kInvalid;  // kRefuse
  };

  FrontLoop(uv_loop_t* loop, const ipc::FrontSettings& settings, common::UniqueFd listener,
            common::UniqueFd epoll);
  static void onAcceptable(uv_poll_t* handle, int status, int events);
  static void onWaitingReadable(uv_poll_t* handle, int status, int events);
  static void onTimer(uv_timer_t* timer);

  void acceptAll();
  // Peeks at `fd` (consumes nothing, changes nothing).
  Verdict judge(int fd);
  // Carries a verdict other than kWait out: the descriptor is gone after it.
  void settle(int fd, const Verdict& verdict);
  void route(int fd, InstanceRoute* instance);
  bool handOff(int fd, InstanceRoute& instance);
  void refuse(int fd, Refusal why);
  void wait(int fd);
  // Out of the epoll set (before the descriptor is handed on or closed: the set would
  // otherwise keep watching a socket a worker now holds) and out of the list.
  void unwait(Waiting* w);
  void expire();
  void armTimer();
  void maybeDrained();

  uv_loop_t* loop_;
  ipc::FrontSettings settings_;
  common::UniqueFd listener_;
  common::UniqueFd epoll_;
  uv_poll_t accept_poll_{};
  uv_poll_t waiting_poll_{};
  uv_timer_t timer_{};
  std::shared_ptr<const RouteTable> routes_ = std::make_shared<RouteTable>();
  Waiting* oldest_ = nullptr;
  Waiting* newest_ = nullptr;
  size_t waiting_count_ = 0;
  ipc::FrontCounters counters_;
  std::map<std::string, uint64_t, std::less<>> handoffs_;
  bool accepting_ = false;
  bool closed_ = false;
  std::function<void()> on_drained_;
  std::array<char, kMaxPeekBytes> peek_{};
  std::unique_ptr<QuicFront> quic_;  // with settings.quic
};

}  // namespace scalws::front
