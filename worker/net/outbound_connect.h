// The start and the end of a non-blocking connect to a backend (an upstream server, a PHP
// pool), shared by every handler that keeps connections of its own.
#pragma once

#include <sys/socket.h>

namespace scalws::worker {

struct ConnectStart {
  int fd = -1;  // -1: it failed at once, `err` says why
  int err = 0;
  bool connected = false;  // connected already (loopback TCP often is; unix always is)
};

// A non-blocking, close-on-exec stream socket to `address`, connect() issued. TCP gets
// TCP_NODELAY: requests and records leave in whole writes, Nagle would only hold back the
// last segment. A unix socket connects at once or fails (EAGAIN there means the backlog is
// full, not "in progress").
ConnectStart startConnect(const sockaddr_storage& address, socklen_t address_len);

// The outcome of a connect in progress once its socket polled writable (or the poll
// failed, `poll_status` < 0): 0 when connected, else the errno.
int finishedConnectError(int fd, int poll_status);

}  // namespace scalws::worker
