// One HTTP/2 client connection (over TLS after ALPN "h2", or h2c with prior knowledge):
// reads into a pooled buffer and feeds the Session, hands each stream's request to the
// RequestDispatcher exactly as HTTP/1 does, and writes what the session serialises through an
// ByteQueue and the Transport. The access log gets one line per stream.
//
// Timeouts (the server's, as for HTTP/1): header_timeout until the first request,
// keepalive_timeout once no stream is open (then GOAWAY), body_timeout while a routed
// request's body is incomplete, send_timeout while output — or response data the peer's
// window holds back — makes no progress (a peer that never opens its window is closed).
// Backpressure: while the output queue is above the session's high-water mark, nothing
// more is read, so a peer that does not read cannot make us queue without bound.
//
// Reload: streams finish on the snapshot they started on; new streams move to the loop's
// current one (two snapshots at most are held at a time).
//
// Lifetime: owned by its WorkerLoop; destroyed in the closed callback of its socket's watch
// (SocketConnection), on a later turn of the loop.
// Streams still answering when it dies get InFlight::abort() first.
#pragma once

#include <uv.h>

#include <memory>

#include "worker/config_snapshot.h"
#include "worker/http/request.h"
#include "worker/http/stream_snapshots.h"
#include "worker/http2/session.h"
#include "worker/loop/socket_connection.h"
#include "worker/loop/timeout_queue.h"
#include "worker/net/byte_queue.h"
#include "worker/net/transport.h"

namespace scalws::worker {
class WorkerLoop;
}

namespace scalws::worker::http2 {

class Connection final : public SocketConnection<Connection>, private SessionOwner {
 public:
  Connection(WorkerLoop& loop, std::unique_ptr<Transport> transport, const PeerInfo& peer);
  ~Connection() override;

  // False when the socket cannot be watched or nghttp2 cannot start; the caller closes
  // the fd and frees this.
  bool start();
  void beginShutdown() override;
  void forceClose() override;

  static SessionSettings settingsFor(const ConfigSnapshot& snapshot);

 private:
  enum class State { kOpen, kLingering, kClosed };
  // SessionOwner
  void onRequest(Stream& stream) noexcept override;
  void onResponseFinished(Stream& stream) noexcept override;
  void onStreamClosed(Stream& stream) noexcept override;
  void onOutputPending() noexcept override;
  void onBodyTooLarge(Stream& stream) noexcept override;
  // TimeoutEntry
  void onTimeout() noexcept override;

  friend class SocketConnection<Connection>;
  void onSocketEvent(int status, int events);

  void onReadable();
  void onLingerReadable();
  void flush();
  void afterOutput();
  void updatePoll();
  void updateTimer();
  void armTimer(Timer timer);
  void startLingering();
  void close();

  State state_ = State::kOpen;
  StreamSnapshots snapshots_;
  Session session_;
  size_t high_water_;
  bool in_event_ = false;
  bool served_any_ = false;
  bool wrote_ = false;     // output made progress since the timer was last set
  bool received_ = false;  // body bytes arrived since the timer was last set
  uint64_t data_sent_mark_ = 0;
};

}  // namespace scalws::worker::http2
