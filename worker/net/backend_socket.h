// The socket of a connection a handler keeps to a backend (a PHP pool, an upstream
// server): a non-blocking connect, a uv_poll_t on its loop registered through PollInterest,
// and the close that waits for libuv to let go of the poll before the fd goes.
//
// A member of its connection object, which it names to libuv as the poll's `data`: the
// connection's static poll and close callbacks find themselves through it. After close()
// nothing may be asked of it but closeFd(), in the close callback, after which the
// connection may free itself.
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include "worker/loop/poll_interest.h"

namespace scalws::worker {

class BackendSocket {
 public:
  // Starts a non-blocking connect to `address` (startConnect) and readies the poll, whose
  // callbacks get `owner` as the handle's data. 0, or the errno when it failed at once
  // (then nothing is left open).
  int connect(uv_loop_t* uv, const sockaddr_storage& address, socklen_t address_len, void* owner);

  int fd() const { return fd_; }
  // The connect completed within connect() (loopback TCP often does, unix sockets always).
  bool connectedAtOnce() const { return connected_at_once_; }

  // Readiness wanted from now on; `cb` hears it.
  void watch(bool readable, bool writable, uv_poll_cb cb) {
    interest_.want(&poll_, (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0), cb);
  }
  // First thing in the poll callback: false when there is nothing to handle (an event that
  // came while nothing was wanted, see PollInterest). `events` as the callback got them.
  bool wants(int status, int events) { return status < 0 || interest_.filter(&poll_, events) != 0; }
  // With a connect in progress, once the socket polled writable (or the poll failed): 0
  // when connected, else the errno.
  int connectResult(int status) const;

  // Stops the poll; `cb` runs once libuv let go of it, and must call closeFd().
  void close(uv_close_cb cb) { uv_close(reinterpret_cast<uv_handle_t*>(&poll_), cb); }
  void closeFd();

 private:
  int fd_ = -1;
  bool connected_at_once_ = false;
  uv_poll_t poll_{};
  PollInterest interest_;
};

}  // namespace scalws::worker
