// UniqueFd: sole ownership of one file descriptor, closed when the owner goes away.
//
// Move-only. -1 means "no fd". close(2) errors are ignored on purpose: on Linux the fd is
// released even when close reports EINTR or EIO, and there is nothing left to retry.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "common/status.h"

namespace scalws::common {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives up ownership without closing; the caller now owns the returned fd.
  int release() { return std::exchange(fd_, -1); }

  // Closes the current fd (if any) and takes ownership of `fd`.
  void reset(int fd = -1) {
    int old = std::exchange(fd_, fd);
    if (old >= 0) ::close(old);
  }

  // A new fd (O_CLOEXEC) for the same open file; `fd` stays with its owner.
  static Result<UniqueFd> duplicate(int fd) {
    int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return errnoStatus(errno, "fcntl(F_DUPFD_CLOEXEC)");
    return UniqueFd(copy);
  }

 private:
  int fd_ = -1;
};

}  // namespace scalws::common
