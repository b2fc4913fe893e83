#include "worker/net/backend_socket.h"

#include <unistd.h>

#include <cerrno>

#include "worker/net/outbound_connect.h"

namespace scalws::worker {

int BackendSocket::connect(SocketPoller& poller, const sockaddr_storage& address,
                           socklen_t address_len, void* owner,
                           SocketPoller::EventCallback on_event) {
  ConnectStart start = startConnect(address, address_len);
  if (start.fd < 0) return start.err;
  poller_ = &poller;
  fd_ = start.fd;
  connected_at_once_ = start.connected;
  poller.attach(watch_, fd_, owner, on_event);
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
