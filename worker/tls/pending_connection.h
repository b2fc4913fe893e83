// A connection whose application protocol is not known yet. On a TLS listener it runs the
// handshake and lets ALPN choose ("h2" → HTTP/2, else HTTP/1.1); on a plain listener with
// http2 = true it peeks at the first bytes for the HTTP/2 connection preface (RFC 9113
// §3.4, h2c with prior knowledge). Then it hands its transport to the protocol's
// connection through WorkerLoop::serveConnection() and goes away.
//
// On a listener with proxy_protocol = true it first reads the PROXY header
// (worker/net/proxy_header_reader.h), before the TLS handshake or the preface: the client
// it names becomes the connection's peer, and a missing or malformed header closes the
// connection. A plain HTTP/1.1 listener (kHttp1) comes here only for that header.
//
// The whole step must finish within header_timeout (a client that connects and says
// nothing, or stalls its handshake, is closed quietly). Nothing was requested yet, so a
// graceful shutdown closes it at once.
//
// Lifetime: owned by its loop like any ClientConnection; the hand-over happens in the
// close callback of its poll handle (libuv allows one poll handle per fd at a time), and
// the object is deleted there, never inside one of its own callbacks.
#pragma once

#include <uv.h>

#include <memory>

#include "worker/http/request.h"
#include "worker/loop/protocols.h"
#include "worker/loop/timeout_queue.h"
#include "worker/net/client_connection.h"
#include "worker/net/proxy_header_reader.h"
#include "worker/net/transport.h"

namespace scalws::worker {
class WorkerLoop;
}

namespace scalws::worker::tls {

class TlsTransport;

class PendingConnection final : public ClientConnection, private TimeoutEntry {
 public:
  enum class Mode { kTlsHandshake, kH2cPreface, kHttp1 };

  // kTlsHandshake takes a TlsTransport; the others a plain one. `proxy_header`: a PROXY
  // protocol header comes first.
  PendingConnection(WorkerLoop& loop, std::unique_ptr<Transport> transport, const PeerInfo& peer,
                    Mode mode, bool proxy_header = false);
  ~PendingConnection() override;
  PendingConnection(const PendingConnection&) = delete;
  PendingConnection& operator=(const PendingConnection&) = delete;

  // False when the socket cannot be watched; the caller closes the fd and frees this.
  bool start();
  void beginShutdown() override { close(); }
  void forceClose() override { close(); }

 private:
  enum class State { kWaiting, kHandingOver, kClosed };

  static void onPollEvent(uv_poll_t* handle, int status, int events);
  static void onPollClosed(uv_handle_t* handle);
  void onTimeout() noexcept override;

  void advance();
  void readProxyHeader();
  void advanceHandshake();
  void sniffPreface();
  void watch(int events);
  void handOver(AppProtocol protocol);
  void close();

  WorkerLoop& loop_;
  std::unique_ptr<Transport> transport_;
  TlsTransport* tls_ = nullptr;  // transport_ as TLS, in kTlsHandshake mode
  PeerInfo peer_;
  Mode mode_;
  State state_ = State::kWaiting;
  AppProtocol protocol_ = AppProtocol::kHttp1;
  uv_poll_t poll_{};
  int poll_events_ = 0;
  uint64_t deadline_ms_ = 0;  // header_timeout from the accept
  bool retry_armed_ = false;  // the timer stands for a short re-peek, not the deadline
  std::unique_ptr<ProxyHeaderReader> proxy_;  // until the PROXY header is read
};

}  // namespace scalws::worker::tls
