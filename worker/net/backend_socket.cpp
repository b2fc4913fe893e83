#include "worker/net/backend_socket.h"

#include <unistd.h>

#include <cerrno>

#include "worker/net/outbound_connect.h"

namespace scalws::worker {

int BackendSocket::connect(uv_loop_t* uv, const sockaddr_storage& address, socklen_t address_len,
                           void* owner) {
  ConnectStart start = startConnect(address, address_len);
  if (start.fd < 0) return start.err;
  if (uv_poll_init(uv, &poll_, start.fd) != 0) {
    ::close(start.fd);
    return EIO;
  }
  fd_ = start.fd;
  connected_at_once_ = start.connected;
  poll_.data = owner;
  return 0;
}

int BackendSocket::connectResult(int status) const {
  return finishedConnectError(fd_, status);
}

void BackendSocket::closeFd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace scalws::worker
