#include "worker/handlers/static/open_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/http_date.h"

namespace scalws::worker {

OpenFile::OpenFile(std::string key, size_t path_offset, int fd, const FileIdentity& identity)
    : key_(std::move(key)), path_offset_(path_offset), fd_(fd), identity_(identity) {
  int n = std::snprintf(etag_, sizeof(etag_), "\"%llx-%llx-%llx\"",
                        static_cast<unsigned long long>(identity.ino),
                        static_cast<unsigned long long>(identity.size),
                        static_cast<unsigned long long>(identity.mtime_ns));
  etag_len_ = n > 0 ? static_cast<size_t>(n) : 0;
  common::formatHttpDate(mtimeSeconds(), last_modified_);
}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OpenFile::onLastRelease() noexcept {
  delete this;
}

bool OpenFile::keepBytes() {
  size_t size = static_cast<size_t>(identity_.size);
  std::unique_ptr<char[]> buf(new char[size > 0 ? size : 1]);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::pread(fd_, buf.get() + got, size - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // error or truncated since the statx: keep nothing
    got += static_cast<size_t>(n);
  }
  bytes_ = std::move(buf);
  return true;
}

}  // namespace scalws::worker
