// InstanceLogFiles: an instance's access.log and error.log in LOG_DIR/NAME/, opened by the
// controller (root) and never by a worker, which may run a tenant's code: a worker gets
// the access log's fd with its listeners and never names a path, and its error lines reach
// error.log through the controller, which reads them from its stderr pipe (worker_log.h).
//
// LOG_DIR and LOG_DIR/NAME are made by the controller, owned by it and writable by nobody
// else (0755 and 0750); one found with other owners or write bits is refused, not fixed.
// The files are opened beneath the directory's fd with O_NOFOLLOW (a symlink planted in
// place of a file is refused, ELOOP) and O_NONBLOCK (a FIFO cannot block the controller),
// and must be regular files. They are created 0640.
//
// reopen() opens both names again (after logrotate renamed them); the fds in force stay
// valid until the caller replaced them, then are closed. Loop thread only.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::controller {

inline constexpr const char* kDefaultLogDir = "/var/log/scalws";

// LOG_DIR/NAME opened as a directory (O_NOFOLLOW), made with LOG_DIR when missing.
common::Result<common::UniqueFd> openInstanceLogDir(const std::string& log_dir,
                                                    const std::string& instance);
// `file` beneath `dir_fd` for appending, created 0640; never through a symlink.
common::Result<common::UniqueFd> openLogFile(int dir_fd, const char* file);

class InstanceLogFiles {
 public:
  InstanceLogFiles(std::string log_dir, std::string instance);

  // Opens error.log, and access.log when `access` (an instance config's access_log = false
  // has none).
  common::Status open(bool access);
  // Opens the files again under their names; the old fds are closed.
  common::Status reopen();
  // Closes both (the instance stopped); lines written meanwhile are dropped.
  void close() {
    access_.reset();
    error_.reset();
  }

  int accessFd() const { return access_.get(); }  // -1 when off or not open
  int errorFd() const { return error_.get(); }
  bool accessOn() const { return access_on_; }
  // A copy of the access log's fd for a worker (-1: none).
  common::Result<common::UniqueFd> duplicateAccess() const;
  // Appends one line (a newline is added) to error.log; dropped when it is not open.
  void writeError(std::string_view line) const;
  const std::string& directory() const { return dir_path_; }

 private:
  std::string log_dir_;
  std::string instance_;
  std::string dir_path_;
  bool access_on_ = false;
  common::UniqueFd access_;
  common::UniqueFd error_;
};

}  // namespace scalws::controller
