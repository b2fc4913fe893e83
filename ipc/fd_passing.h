// One non-blocking sendmsg/recvmsg on a SOCK_STREAM Unix socket, with SCM_RIGHTS fds.
//
// On a stream socket the kernel attaches sent fds to the first byte of that sendmsg, and
// a recvmsg that picks them up stops right after their bytes; so fds arrive no later
// than the first byte of the frame they were sent with (ipc/endpoint.cpp relies on it).
// Both calls retry EINTR and use MSG_NOSIGNAL / MSG_CMSG_CLOEXEC.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::ipc {

struct Transferred {
  size_t bytes = 0;
  bool would_block = false;  // EAGAIN: nothing moved, wait for the socket
};

// Sends a prefix of `bytes` (possibly all of it) with `fds` attached; the fds are sent iff
// bytes > 0 (then the caller may close its copies). At most kMaxFdsPerFrame fds.
// A dead peer is an error (EPIPE/ECONNRESET), never SIGPIPE.
common::Result<Transferred> sendWithFds(int sock, std::string_view bytes, std::span<const int> fds);

// Receives into `buffer`; fds that came along are appended to `fds`, owned and
// O_CLOEXEC. bytes == 0 without would_block is end of stream. If the kernel truncated
// the control data (MSG_CTRUNC: more fds than kMaxFdsPerFrame, or no fd slots left),
// the fds that did arrive are closed and an error is returned: the stream no longer
// says which fd belongs to which frame.
common::Result<Transferred> receiveWithFds(int sock, std::span<char> buffer,
                                           std::vector<common::UniqueFd>& fds);

// Calls `take(fd)` for each descriptor a received message carries (SCM_RIGHTS), in order;
// each is then the callee's to keep or close.
template <class Take>
void forEachReceivedFd(msghdr& msg, Take&& take) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      take(fd);
    }
  }
}

}  // namespace scalws::ipc
