#include "worker/net/transport.h"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace scalws::worker {

void Transport::shutdownWrite() noexcept {
  ::shutdown(fd(), SHUT_WR);
}

ssize_t PlainTransport::read(char* buf, size_t len) noexcept {
  ssize_t n;
  do {
    n = ::read(fd_, buf, len);
  } while (n < 0 && errno == EINTR);
  return n;
}

ssize_t PlainTransport::writev(const iovec* iov, int count) noexcept {
  ssize_t n;
  do {
    n = ::writev(fd_, iov, count);
  } while (n < 0 && errno == EINTR);
  return n;
}

ssize_t PlainTransport::writevMore(const iovec* iov, int count) noexcept {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = static_cast<size_t>(count);
  ssize_t n;
  do {
    n = ::sendmsg(fd_, &msg, MSG_MORE | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

ssize_t PlainTransport::sendFile(int file_fd, uint64_t offset, size_t len) noexcept {
  off_t off = static_cast<off_t>(offset);
  ssize_t n;
  do {
    n = ::sendfile(fd_, file_fd, &off, len);
  } while (n < 0 && errno == EINTR);
  return n;
}

}  // namespace scalws::worker
