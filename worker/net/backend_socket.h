// The socket of a connection a handler keeps to a backend (a PHP pool, an upstream
// server): a non-blocking connect, a watch in the loop's SocketPoller (registered lazily,
// socket_poller.h), and the close that waits for the poller to let go of the watch before
// the fd goes.
//
// A member of its connection object, which the poller's callbacks get as their `owner`.
// After close() nothing may be asked of it but closeFd(), in the closed callback, after
// which the connection may free itself.
#pragma once

#include <sys/socket.h>

#include "worker/loop/socket_poller.h"

namespace scalws::worker {

class BackendSocket {
 public:
  // Starts a non-blocking connect to `address` (startConnect) and attaches it to `poller`,
  // whose callbacks get `owner`; `on_event` hears what watch() asks for. 0, or the errno
  // when it failed at once (then nothing is left open).
  int connect(SocketPoller& poller, const sockaddr_storage& address, socklen_t address_len,
              void* owner, SocketPoller::EventCallback on_event);

  int fd() const { return fd_; }
  // The connect completed within connect() (loopback TCP often does, unix sockets always).
  bool connectedAtOnce() const { return connected_at_once_; }

  // Readiness wanted from now on.
  void watch(bool readable, bool writable) {
    poller_->want(watch_, (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0));
  }
  // With a connect in progress, once the socket polled writable (or the poll failed): 0
  // when connected, else the errno.
  int connectResult(int status) const;

  // Out of the poller now; `on_closed(owner)` runs on a later turn and must call closeFd(),
  // whose close takes the socket (this process's own) out of the poller's set.
  void close(SocketPoller::ClosedCallback on_closed) {
    poller_->releaseForClose(watch_, on_closed);
  }
  void closeFd();

 private:
  SocketPoller* poller_ = nullptr;
  SocketPoller::Watch watch_;
  int fd_ = -1;
  bool connected_at_once_ = false;
};

}  // namespace scalws::worker
