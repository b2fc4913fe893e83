// A static route's document root: a directory fd opened once, when the config snapshot is
// built (before any sandbox), and the only way files of that route are ever reached
//. Every open goes through openat2(2) with RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS (plus RESOLVE_NO_SYMLINKS for follow_symlinks = "never"), so a
// ".." or a symlink that would leave the root fails in the kernel, whatever our own
// lexical checks let through.
//
// Ownership: a DocRoot owns its fd and closes it when destroyed (with the snapshot that
// holds the handler). Files already opened through it stay valid after that.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::worker {

// What identifies one version of a file: a replaced file (new inode), a rewritten one
// (mtime, ctime, size) or one moved to another filesystem all compare unequal.
struct FileIdentity {
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint32_t mode = 0;  // st_mode: type and permission bits

  bool isRegular() const;
  bool isDirectory() const;
  bool operator==(const FileIdentity&) const = default;
};

class DocRoot {
 public:
  // Opens `path` (absolute) as O_PATH|O_DIRECTORY. Errors name the path; the caller adds
  // the config position.
  static common::Result<DocRoot> open(const std::string& path,
                                      common::config::FollowSymlinks follow);
  DocRoot() = default;
  DocRoot(DocRoot&& other) noexcept;
  DocRoot& operator=(DocRoot&& other) noexcept;
  DocRoot(const DocRoot&) = delete;
  DocRoot& operator=(const DocRoot&) = delete;
  ~DocRoot();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // The root directory's own identity (dev, ino), for cache keys that survive a reload.
  uint64_t dev() const { return dev_; }
  uint64_t ino() const { return ino_; }
  uint64_t resolveFlags() const { return resolve_flags_; }

  // `relative` is NUL-terminated, without a leading '/' ("." for the root itself). Opens
  // read-only and non-blocking (a FIFO planted in the root must not stall the loop).
  // Returns the fd or -1 with errno (EXDEV, ELOOP: the path would leave the root).
  int openFile(const char* relative) const noexcept;
  // One statx of the path as openFile would resolve it, for the open-file cache's check
  // mode. With follow_symlinks = "never" the last component is not followed.
  bool statPath(const char* relative, FileIdentity& out) const noexcept;
  // statx of an open fd.
  static bool statFd(int fd, FileIdentity& out) noexcept;

 private:
  int fd_ = -1;
  std::string path_;
  uint64_t dev_ = 0;
  uint64_t ino_ = 0;
  uint64_t resolve_flags_ = 0;
  int statx_flags_ = 0;
};

}  // namespace scalws::worker
