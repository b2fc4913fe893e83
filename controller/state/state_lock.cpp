#include "controller/state/state_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <utility>

namespace scalws::controller::state {

using common::Result;
using common::Status;

namespace {

pid_t readPidFromFd(int fd) {
  char buf[32];
  ssize_t n = pread(fd, buf, sizeof(buf), 0);
  if (n <= 0) return 0;
  pid_t pid = 0;
  auto [end, ec] = std::from_chars(buf, buf + n, pid);
  if (ec != std::errc() || end == buf || pid <= 0) return 0;
  return pid;
}

}  // namespace

pid_t StateLock::readHolderPid(const std::string& state_dir) {
  int fd = open((state_dir + "/lock").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;
  pid_t pid = readPidFromFd(fd);
  close(fd);
  return pid;
}

Result<StateLock> StateLock::acquire(const std::string& state_dir) {
  std::string path = state_dir + "/lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return common::errnoStatus(errno, "open " + path);
  int rc;
  do {
    rc = flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    if (err != EWOULDBLOCK) {
      close(fd);
      return common::errnoStatus(err, "flock " + path);
    }
    pid_t holder = readPidFromFd(fd);
    close(fd);
    std::string who = holder > 0 ? "pid " + std::to_string(holder) : "pid unknown";
    return Status(common::StatusCode::kFailedPrecondition,
                  "state directory " + state_dir + " is in use by another scalws-controller (" +
                      who + ", holding " + path + "); stop it or use another --state-dir");
  }
  // Write first, then cut the tail: a reader racing with us sees the old PID or the new
  // one, never an empty file (except before the very first holder has written).
  std::string text = std::to_string(getpid()) + "\n";
  errno = 0;
  if (pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
      ftruncate(fd, static_cast<off_t>(text.size())) != 0) {
    int err = errno != 0 ? errno : EIO;  // a short write sets no errno
    close(fd);
    return common::errnoStatus(err, "write pid to " + path);
  }
  return StateLock(fd, std::move(path));
}

StateLock::StateLock(StateLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

StateLock& StateLock::operator=(StateLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

StateLock::~StateLock() {
  // Closing the last fd of the open file description releases the flock.
  if (fd_ >= 0) close(fd_);
}

}  // namespace scalws::controller::state
