// One HTTP/3 client connection: the QUIC transport, the HTTP/3 session on top of it, and
// the glue to the loop — a timer for QUIC's deadlines, a place in the loop's connection
// list, the listener's socket to write through. Each stream's request goes to the
// RequestDispatcher as HTTP/1.1's and HTTP/2's do, and its end to the access log and the
// counters (RequestDispatcher::account); it never routes.
//
// Early data (0-RTT, only when listen.quic.early_data is on): a request whose head came in
// 0-RTT is served only for GET, HEAD and OPTIONS; anything else gets 425 Too Early
// (RFC 8470 §5.2) and the client retries it after the handshake.
//
// Reload: streams finish on the snapshot they started on; new streams move to the loop's
// current one (two snapshots at most are held at a time), as for HTTP/2.
//
// Shutdown: beginShutdown() sends GOAWAY; once no request is left the connection closes
// with H3_NO_ERROR. Idle connections end by QUIC's idle timeout (listen.quic.idle_timeout),
// silently (RFC 9000 §10.1).
//
// Lifetime: created by its Listener for a client's first Initial; freed in the close
// callback of its timer once the transport is gone (closing and draining periods over).
#pragma once

#include <uv.h>

#include <memory>

#include "worker/config_snapshot.h"
#include "worker/http/request.h"
#include "worker/http/stream_snapshots.h"
#include "worker/http3/session.h"
#include "worker/net/client_connection.h"
#include "worker/quic/connection.h"
#include "worker/quic/endpoint.h"

namespace scalws::worker {
class WorkerLoop;
}

namespace scalws::worker::http3 {

class Listener;

class Connection final : public ClientConnection,
                         public quic::EndpointConnection,
                         private SessionOwner {
 public:
  Connection(Listener& listener, std::shared_ptr<const quic::TlsContext> tls,
             const quic::ConnectionSettings& settings);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts the transport on the client's first Initial; false: the caller frees this.
  bool start(const quic::Connection::Start& start);

  // quic::EndpointConnection
  quic::Connection& transport() noexcept override { return transport_; }
  void onDatagram(const quic::Datagram& datagram, uint64_t now) noexcept override;
  void afterDatagrams(uint64_t now) noexcept override;

  // ClientConnection
  void beginShutdown() override;
  void forceClose() override;

  static SessionSettings settingsFor(const ConfigSnapshot& snapshot);

 private:
  enum class State { kServing, kGone };
  // SessionOwner
  void onRequest(Stream& stream) noexcept override;
  void onResponseFinished(Stream& stream) noexcept override;
  void onStreamClosed(Stream& stream) noexcept override;
  void onOutputPending() noexcept override;
  void onBodyTooLarge(Stream& stream) noexcept override;

  static void onTimer(uv_timer_t* timer);
  static void onTimerClosed(uv_handle_t* handle);

  // Writes what is ready, then re-arms the timer or ends the connection.
  void flush(uint64_t now);
  void settle(uint64_t now);
  void updatePeer();
  void countTransport();
  void destroy();

  Listener& listener_;
  WorkerLoop& loop_;
  Session session_;
  quic::Connection transport_;
  PeerInfo peer_;
  uv_timer_t timer_{};
  State state_ = State::kServing;
  StreamSnapshots snapshots_;
  bool in_event_ = false;    // inside a datagram batch or the timer: flush at its end
  bool write_soon_ = false;  // write() stopped with more to send
  bool counted_handshake_ = false;
  // What the transport's own counts were when last added to the loop's counters.
  uint64_t counted_migrations_ = 0;
  uint64_t counted_lost_ = 0;
};

}  // namespace scalws::worker::http3
