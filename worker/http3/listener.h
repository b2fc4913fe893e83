// The HTTP/3 side of one listener on one loop: its UDP socket (polled by the loop), the
// QUIC endpoint that routes datagrams to connections, and the factory that makes an
// http3::Connection for each new client. LoopListeners holds a loop's listeners as
// per-loop state (loop_local.h), so the loop only hands it the socket.
//
// New connections take the loop's current snapshot (certificates and listen.quic limits
// after a reload); the Retry policy follows the snapshot too. The UDP socket stays open
// while the loop drains (connections still need it) and closes when the loop stops.
#pragma once

#include <uv.h>

#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "worker/loop/loop_local.h"
#include "worker/loop/worker_loop.h"
#include "worker/quic/endpoint.h"
#include "worker/quic/udp_socket.h"

namespace scalws::worker::http3 {

// The QUIC limits of a listener, as the transport wants them.
quic::ConnectionSettings connectionSettings(const common::config::QuicConfig& quic);

class Listener final : public quic::ConnectionFactory {
 public:
  Listener(WorkerLoop& loop, const ListenerSocket& socket);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Sets the socket up and starts reading it. An error leaves nothing running.
  common::Status start();
  // A datagram the shared address's front passed on (ipc/forwarded_datagram.h); the
  // connections it reached write at endForwarded().
  void onForwarded(std::span<const uint8_t> message);
  void endForwarded();
  // Sends what connections queued on the socket, unless a batch is under way (it sends
  // at its end). For writes outside the listener's batches and the loop's timers (whose
  // writes the prepare handle sends): a handler that answered later, a shutdown.
  void sendQueued();
  // Stops reading and closes the poll handle (the loop is ending; no connection is left).
  void stop();

  WorkerLoop& loop() { return loop_; }
  quic::Endpoint& endpoint() { return *endpoint_; }
  quic::UdpSocket& socket() { return socket_; }
  uint16_t port() const { return socket_info_.port; }
  bool frontRouted() const { return socket_info_.front_routed; }
  int listenIndex() const { return socket_info_.listen_index; }

  // quic::ConnectionFactory
  bool admitsConnection() noexcept override;
  quic::EndpointConnection* createConnection(
      const quic::Connection::Start& start) noexcept override;

 private:
  static void onPoll(uv_poll_t* handle, int status, int events);
  static void onBeforeWait(uv_prepare_t* handle);
  void onReadable();
  void followSnapshot();
  // The socket's and the endpoint's counters since the last call, into the loop's.
  void countSocket();
  const common::config::ListenConfig& listenConfig() const;

  WorkerLoop& loop_;
  ListenerSocket socket_info_;
  quic::UdpSocket socket_;
  std::unique_ptr<quic::Endpoint> endpoint_;
  uv_poll_t* poll_ = nullptr;            // freed by its close callback
  uv_prepare_t* before_wait_ = nullptr;  // flushes the socket's send queue; freed likewise
  const ConfigSnapshot* followed_ = nullptr;
  uint64_t counted_in_ = 0;  // socket bytes already added to the loop's counters
  uint64_t counted_out_ = 0;
  uint64_t counted_retries_ = 0;
  bool reading_ = false;    // in onReadable()
  bool forwarded_ = false;  // datagrams from the front since the last endForwarded()
  uint64_t run_now_ = 0;    // the clocks of that run
  uint64_t run_unix_now_ = 0;
};

class LoopListeners final : public LoopLocal {
 public:
  explicit LoopListeners(WorkerLoop& loop) : loop_(loop) {}
  // Starts serving HTTP/3 on a bound UDP socket; false (logged) when it cannot start.
  bool add(const ListenerSocket& socket);
  // A datagram from the front for the front-routed listener of listens[listen_index];
  // false when this loop has none.
  bool forward(int listen_index, std::span<const uint8_t> message);
  void endForwarded();
  void onLoopStopping() noexcept override;
  const std::vector<std::unique_ptr<Listener>>& listeners() const { return listeners_; }

 private:
  WorkerLoop& loop_;
  std::vector<std::unique_ptr<Listener>> listeners_;
};

}  // namespace scalws::worker::http3
