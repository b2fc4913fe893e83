#include "ipc/fd_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "ipc/message.h"

namespace scalws::ipc {
namespace {

using common::Result;
using common::UniqueFd;

// Room for kMaxFdsPerFrame ints, aligned for cmsghdr.
union ControlBuffer {
  char bytes[CMSG_SPACE(sizeof(int) * kMaxFdsPerFrame)];
  cmsghdr align;
};

}  // namespace

Result<Transferred> sendWithFds(int sock, std::string_view bytes, std::span<const int> fds) {
  if (fds.size() > kMaxFdsPerFrame) {
    return common::invalidArgument("ipc: at most " + std::to_string(kMaxFdsPerFrame) +
                                   " fds per frame");
  }
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  ControlBuffer control;
  if (!fds.empty()) {
    std::memset(&control, 0, sizeof(control));
    msg.msg_control = control.bytes;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return Transferred{static_cast<size_t>(n), false};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Transferred{0, true};
    return common::errnoStatus(errno, "ipc: sendmsg");
  }
}

Result<Transferred> receiveWithFds(int sock, std::span<char> buffer, std::vector<UniqueFd>& fds) {
  iovec iov{buffer.data(), buffer.size()};
  ControlBuffer control;
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.bytes;
  msg.msg_controllen = sizeof(control.bytes);
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Transferred{0, true};
    return common::errnoStatus(errno, "ipc: recvmsg");
  }
  // Take ownership of every fd first, so an error below closes them all.
  std::vector<UniqueFd> received;
  forEachReceivedFd(msg, [&](int fd) { received.emplace_back(fd); });
  if (msg.msg_flags & MSG_CTRUNC) {
    return common::Status(common::StatusCode::kResourceExhausted,
                          "ipc: fds were lost in transit (control data truncated: too many fds "
                          "in one message, or no free fd slots here)");
  }
  for (UniqueFd& fd : received) fds.push_back(std::move(fd));
  return Transferred{static_cast<size_t>(n), false};
}

}  // namespace scalws::ipc
