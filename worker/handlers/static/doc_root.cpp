#include "worker/handlers/static/doc_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace scalws::worker {
namespace {

constexpr unsigned kStatxMask =
    STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE | STATX_MTIME | STATX_CTIME;

int64_t nanoseconds(const statx_timestamp& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

void fromStatx(const struct statx& sx, FileIdentity& out) {
  out.dev = (static_cast<uint64_t>(sx.stx_dev_major) << 32) | sx.stx_dev_minor;
  out.ino = sx.stx_ino;
  out.size = sx.stx_size;
  out.mtime_ns = nanoseconds(sx.stx_mtime);
  out.ctime_ns = nanoseconds(sx.stx_ctime);
  out.mode = sx.stx_mode;
}

// glibc 2.36 has no openat2() wrapper; the raw syscall is the interface.
int openat2Raw(int dirfd, const char* path, uint64_t flags, uint64_t resolve) {
  open_how how{};
  how.flags = flags;
  how.resolve = resolve;
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, &how, sizeof(how)));
}

}  // namespace

bool FileIdentity::isRegular() const {
  return S_ISREG(mode);
}

bool FileIdentity::isDirectory() const {
  return S_ISDIR(mode);
}

common::Result<DocRoot> DocRoot::open(const std::string& path,
                                      common::config::FollowSymlinks follow) {
  DocRoot root;
  root.path_ = path;
  root.fd_ = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root.fd_ < 0) {
    return common::errnoStatus(errno, "static root \"" + path + "\" cannot be opened");
  }
  FileIdentity id;
  if (!statFd(root.fd_, id)) {
    return common::errnoStatus(errno, "static root \"" + path + "\" cannot be examined");
  }
  root.dev_ = id.dev;
  root.ino_ = id.ino;
  root.resolve_flags_ = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  root.statx_flags_ = AT_STATX_SYNC_AS_STAT | AT_NO_AUTOMOUNT;
  if (follow == common::config::FollowSymlinks::kNever) {
    root.resolve_flags_ |= RESOLVE_NO_SYMLINKS;
    root.statx_flags_ |= AT_SYMLINK_NOFOLLOW;
  }
  // Probe once so a kernel without openat2 (before 5.6) is a start-up error, not a 500 on
  // every request.
  int probe = openat2Raw(root.fd_, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, root.resolve_flags_);
  if (probe < 0) {
    return common::errnoStatus(errno, "openat2 beneath static root \"" + path + "\" failed");
  }
  ::close(probe);
  return root;
}

DocRoot::DocRoot(DocRoot&& other) noexcept {
  *this = std::move(other);
}

DocRoot& DocRoot::operator=(DocRoot&& other) noexcept {
  if (this == &other) return *this;
  if (fd_ >= 0) ::close(fd_);
  fd_ = std::exchange(other.fd_, -1);
  path_ = std::move(other.path_);
  dev_ = other.dev_;
  ino_ = other.ino_;
  resolve_flags_ = other.resolve_flags_;
  statx_flags_ = other.statx_flags_;
  return *this;
}

DocRoot::~DocRoot() {
  if (fd_ >= 0) ::close(fd_);
}

int DocRoot::openFile(const char* relative) const noexcept {
  int fd;
  do {
    fd = openat2Raw(fd_, relative, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, resolve_flags_);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

bool DocRoot::statPath(const char* relative, FileIdentity& out) const noexcept {
  struct statx sx;
  if (::statx(fd_, relative, statx_flags_, kStatxMask, &sx) != 0) return false;
  fromStatx(sx, out);
  return true;
}

bool DocRoot::statFd(int fd, FileIdentity& out) noexcept {
  struct statx sx;
  if (::statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, kStatxMask, &sx) != 0) return false;
  fromStatx(sx, out);
  return true;
}

}  // namespace scalws::worker
