// One connection to an upstream server, watched in its loop's SocketPoller: connect, TLS
// handshake when the upstream speaks HTTPS, then requests one at a time. Its UpstreamPool
// lends it to one user (an exchange or a health probe) at a time and keeps it idle between
// requests.
//
// Idle, it watches for readability: any event then is the server closing it (EOF) or
// sending bytes nobody asked for, and the pool drops it, so a dead kept connection is
// noticed before it is reused rather than by the next request. It also expires after the
// upstream's keepalive_timeout.
//
// Lifetime: created by open(); close() stops it, and the poller's closed callback closes
// the fd and frees the object. Events go to the user while lent and to the pool while idle.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>

#include "worker/handlers/proxy/upstream_tls.h"
#include "worker/loop/timeout_queue.h"
#include "worker/net/backend_socket.h"
#include "worker/net/transport.h"

namespace scalws::worker {
class WorkerLoop;
}

namespace scalws::worker::proxy {

struct ServerSpec;

class UpstreamConnectionUser {
 public:
  // Connected (and through the TLS handshake): requests may be written.
  virtual void onUpstreamConnected() noexcept = 0;
  // `err`: errno, or EPROTO for a failed TLS handshake (why: failure()).
  virtual void onUpstreamConnectFailed(int err) noexcept = 0;
  // UV_READABLE / UV_WRITABLE; `status` < 0 when the poll itself failed.
  virtual void onUpstreamEvent(int status, int events) noexcept = 0;

 protected:
  ~UpstreamConnectionUser() = default;
};

class UpstreamConnectionOwner {
 public:
  // An idle connection saw an event or expired: the owner closes it.
  virtual void onIdleClosed(class UpstreamConnection& connection) noexcept = 0;

 protected:
  ~UpstreamConnectionOwner() = default;
};

class UpstreamConnection final : private TimeoutEntry {
 public:
  enum class State { kConnecting, kHandshaking, kIdle, kInUse, kClosing };

  // Starts a non-blocking connect to `server` (a TLS handshake follows when `tls`). Null
  // with `err` set when it failed at once. `session`: a TLS session to resume, or null.
  static UpstreamConnection* open(WorkerLoop& loop, const ServerSpec& server,
                                  const UpstreamTlsContext* tls, SSL_SESSION* session,
                                  int server_index, UpstreamConnectionOwner& owner, int& err);

  State state() const { return state_; }
  Transport& transport() { return *transport_; }
  int serverIndex() const { return server_index_; }
  // Requests completed on it: above 0 it is a reused connection.
  uint32_t requestsServed() const { return served_; }
  void countServed() { ++served_; }
  // Why the TLS handshake failed, when it did.
  const char* failure() const;
  // After a completed TLS handshake: the session to resume next time (a new reference), or
  // null for plain connections.
  SSL_SESSION* takeTlsSession() const;

  void lend(UpstreamConnectionUser* user);
  // Kept for a later request: watches for EOF and expires after `idle_ms`.
  void makeIdle(uint64_t idle_ms);
  void watch(bool readable, bool writable);
  void close();

  // The pool's idle list.
  UpstreamConnection* idle_next = nullptr;
  UpstreamConnection* idle_prev = nullptr;

 private:
  UpstreamConnection(WorkerLoop& loop, int server_index, UpstreamConnectionOwner& owner);
  ~UpstreamConnection();
  static void onPoll(void* owner, int status, int events);
  static void onClosed(void* owner);
  void onTimeout() noexcept override;
  void continueHandshake();
  void connected();
  void connectFailed(int err);

  WorkerLoop& loop_;
  BackendSocket socket_;
  int server_index_;
  UpstreamConnectionOwner& owner_;
  std::unique_ptr<Transport> transport_;
  ClientTlsTransport* tls_ = nullptr;  // transport_ when TLS
  State state_ = State::kConnecting;
  UpstreamConnectionUser* user_ = nullptr;
  uint32_t served_ = 0;
};

}  // namespace scalws::worker::proxy
