// What every client connection does with its socket, whatever its protocol: its watch in
// the loop's SocketPoller (registered lazily), the transport, writing the output queue
// with the loop's byte counter, the lingering close, and the end — the fd closed, the
// loop told, the object deleted — in the poller's closed callback on a later turn, never
// inside one of the connection's own callbacks. HTTP/1.1's and HTTP/2's connections derive from
// it; the protocol keeps its codec and its state, and decides which timeout runs.
//
// `Derived` receives socket events through a static trampoline (no virtual call per event):
// it declares `void onSocketEvent(int status, int events)`.
#pragma once

#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/config/site_config.h"
#include "worker/http/request.h"
#include "worker/loop/socket_poller.h"
#include "worker/loop/timeout_queue.h"
#include "worker/loop/worker_loop.h"
#include "worker/net/byte_queue.h"
#include "worker/net/client_connection.h"
#include "worker/net/transport.h"

namespace scalws::worker {

template <class Derived>
class SocketConnection : public ClientConnection, protected TimeoutEntry {
 public:
  // How long, and how much, a closing connection reads and drops (lingerRead()).
  static constexpr uint64_t kLingerMs = 2000;
  static constexpr size_t kLingerMaxBytes = 1 << 20;

  SocketConnection(const SocketConnection&) = delete;
  SocketConnection& operator=(const SocketConnection&) = delete;

 protected:
  SocketConnection(WorkerLoop& loop, std::unique_ptr<Transport> transport, const PeerInfo& peer)
      : loop_(loop), transport_(std::move(transport)), peer_(peer), out_(loop.buffers()) {}
  ~SocketConnection() override { loop_.disarmTimeout(*this); }

  // The connection's one timeout at a time; `Derived` implements onTimeout() and reads
  // timer_ to tell which fired. The durations are the server's (kLinger: kLingerMs).
  enum class Timer : uint8_t { kNone, kHeader, kKeepAlive, kBody, kSend, kLinger };
  void setTimer(Timer timer, const common::config::ServerConfig& server) {
    timer_ = timer;
    uint64_t ms = 0;
    switch (timer) {
      case Timer::kNone:
        loop_.disarmTimeout(*this);
        return;
      case Timer::kHeader:
        ms = server.header_timeout;
        break;
      case Timer::kKeepAlive:
        ms = server.keepalive_timeout;
        break;
      case Timer::kBody:
        ms = server.body_timeout;
        break;
      case Timer::kSend:
        ms = server.send_timeout;
        break;
      case Timer::kLinger:
        ms = kLingerMs;
        break;
    }
    loop_.armTimeout(*this, ms);
  }
  // In onTimeout(): which timer fired (the entry is disarmed already).
  Timer takeFiredTimer() {
    Timer fired = timer_;
    timer_ = Timer::kNone;
    return fired;
  }

  // Binds the socket to the loop's poller; nothing is watched until watch().
  void startPolling() {
    loop_.poller().attach(watch_, transport_->fd(), this, &SocketConnection::onPoll);
  }
  // UV_READABLE | UV_WRITABLE, or 0.
  void watch(int events) { loop_.poller().want(watch_, events); }
  // No readable event since the poller last looked, or one dropped while nothing was to be
  // read (SocketPoller::holdsForReading).
  bool noInputSinceLastWait() const { return SocketPoller::holdsForReading(watch_); }

  // Writes what the queue holds, as much as the socket takes.
  ByteQueue::FlushResult writeOutput() {
    uint64_t before = out_.pendingBytes();
    ByteQueue::FlushResult r = out_.flush(*transport_);
    loop_.counters().bytes_out.add(before - out_.pendingBytes());
    return r;
  }

  // Lingering close: stop sending (TLS: close_notify first), then read and drop what the
  // peer still sends for a moment, so the last response is not destroyed by a reset
  // (nginx's lingering close). The derived class arms its kLingerMs timer.
  void beginLinger() {
    transport_->shutdownWrite();
    linger_bytes_ = 0;
  }
  // One readable event while lingering: false once the connection should close (the peer
  // finished, failed, or sent more than kLingerMaxBytes).
  bool lingerRead() {
    char sink[4096];
    ssize_t n = transport_->read(sink, sizeof(sink));
    if (n == 0 || (n < 0 && errno != EAGAIN)) return false;
    if (n > 0) linger_bytes_ += static_cast<size_t>(n);
    return linger_bytes_ <= kLingerMaxBytes;
  }

  // The end: drops pending output and releases the watch; the closed callback closes the
  // fd, unregisters from the loop and deletes the connection. Call once.
  void closeSocket() {
    out_.clear();
    if (peer_.handed_over) {
      loop_.poller().release(watch_, &SocketConnection::onClosed);
    } else {
      loop_.poller().releaseForClose(watch_, &SocketConnection::onClosed);
    }
  }

  WorkerLoop& loop_;
  std::unique_ptr<Transport> transport_;
  PeerInfo peer_;
  ByteQueue out_;
  Timer timer_ = Timer::kNone;

 private:
  static void onPoll(void* owner, int status, int events) {
    static_cast<Derived*>(static_cast<SocketConnection*>(owner))->onSocketEvent(status, events);
  }
  static void onClosed(void* owner) {
    auto* self = static_cast<SocketConnection*>(owner);
    ::close(self->transport_->fd());
    self->loop_.onConnectionClosed(self);
    delete static_cast<Derived*>(self);
  }

  SocketPoller::Watch watch_;
  size_t linger_bytes_ = 0;
};

}  // namespace scalws::worker
