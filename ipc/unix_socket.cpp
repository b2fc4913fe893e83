#include "ipc/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace scalws::ipc {
namespace {

using common::Result;
using common::UniqueFd;

Result<sockaddr_un> unixAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return common::invalidArgument("ipc: socket path must be 1 to " +
                                   std::to_string(sizeof(addr.sun_path) - 1) + " bytes: " + path);
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

Result<UniqueFd> streamSocket() {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return common::errnoStatus(errno, "ipc: socket(AF_UNIX)");
  return fd;
}

}  // namespace

Result<std::pair<UniqueFd, UniqueFd>> socketPair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) != 0) {
    return common::errnoStatus(errno, "ipc: socketpair");
  }
  return std::pair<UniqueFd, UniqueFd>(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

Result<UniqueFd> listenUnix(const std::string& path, int backlog) {
  auto addr = unixAddress(path);
  if (!addr.ok()) return addr.status();
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return common::Status(common::StatusCode::kAlreadyExists,
                            "ipc: " + path + " exists and is not a socket");
    }
    ::unlink(path.c_str());
  }
  auto fd = streamSocket();
  if (!fd.ok()) return fd.status();
  if (::bind(fd->get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    return common::errnoStatus(errno, "ipc: bind " + path);
  }
  if (::listen(fd->get(), backlog) != 0) return common::errnoStatus(errno, "ipc: listen " + path);
  return std::move(*fd);
}

Result<UniqueFd> connectUnix(const std::string& path, std::chrono::milliseconds timeout) {
  auto addr = unixAddress(path);
  if (!addr.ok()) return addr.status();
  auto fd = streamSocket();
  if (!fd.ok()) return fd.status();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (::connect(fd->get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) == 0) {
      return std::move(*fd);
    }
    int err = errno;
    if (err == EINTR) continue;
    if (err != EAGAIN && err != EINPROGRESS) {
      return common::errnoStatus(err, "ipc: connect " + path);
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return common::Status(common::StatusCode::kTimeout, "ipc: connect " + path + ": timed out");
    }
    if (err == EINPROGRESS) {
      pollfd pfd{fd->get(), POLLOUT, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
        return common::Status(common::StatusCode::kTimeout, "ipc: connect " + path + ": timed out");
      }
      int so_error = 0;
      socklen_t length = sizeof(so_error);
      ::getsockopt(fd->get(), SOL_SOCKET, SO_ERROR, &so_error, &length);
      if (so_error != 0) return common::errnoStatus(so_error, "ipc: connect " + path);
      return std::move(*fd);
    }
    // EAGAIN: the listener's backlog is full, and poll cannot tell when it drains.
    std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(10)));
  }
}

}  // namespace scalws::ipc
