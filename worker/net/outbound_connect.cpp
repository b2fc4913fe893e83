#include "worker/net/outbound_connect.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>

namespace scalws::worker {

ConnectStart startConnect(const sockaddr_storage& address, socklen_t address_len) {
  ConnectStart out;
  int family = address.ss_family;
  int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    out.err = errno;
    return out;
  }
  if (family != AF_UNIX) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), address_len);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0 && (errno != EINPROGRESS || family == AF_UNIX)) {
    out.err = errno;
    ::close(fd);
    return out;
  }
  out.fd = fd;
  out.connected = rc == 0;
  return out;
}

int finishedConnectError(int fd, int poll_status) {
  if (poll_status < 0) return ECONNREFUSED;
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

}  // namespace scalws::worker
