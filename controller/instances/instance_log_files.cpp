#include "controller/instances/instance_log_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace scalws::controller {

using common::Result;
using common::Status;
using common::UniqueFd;

namespace {

// A directory the controller writes logs beneath: ours, and no one else may add or swap
// an entry in it (which is what would let a tenant point a name at another file).
Status checkDirectory(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return common::errnoStatus(errno, "stat " + path);
  if (!S_ISDIR(st.st_mode)) return common::invalidArgument(path + " is not a directory");
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Status(common::StatusCode::kPermissionDenied,
                  path + " must be owned by the controller's user and writable by no one else");
  }
  return common::okStatus();
}

// `name` beneath `parent` (-1: an absolute path), made with `mode` when missing.
Result<UniqueFd> openDirectory(int parent, const std::string& name, const std::string& path,
                               mode_t mode) {
  int at = parent < 0 ? AT_FDCWD : parent;
  if (::mkdirat(at, name.c_str(), mode) != 0 && errno != EEXIST) {
    return common::errnoStatus(errno, "cannot make " + path);
  }
  UniqueFd fd(::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return common::errnoStatus(errno, "cannot open " + path);
  SCALWS_RETURN_IF_ERROR(checkDirectory(fd.get(), path));
  return fd;
}

}  // namespace

Result<UniqueFd> openInstanceLogDir(const std::string& log_dir, const std::string& instance) {
  if (log_dir.empty() || log_dir.front() != '/') {
    return common::invalidArgument("the log directory must be an absolute path");
  }
  if (instance.empty() || instance.find('/') != std::string::npos || instance == "." ||
      instance == "..") {
    return common::invalidArgument("\"" + instance + "\" cannot name a log directory");
  }
  SCALWS_ASSIGN_OR_RETURN(UniqueFd top, openDirectory(-1, log_dir, log_dir, 0755));
  return openDirectory(top.get(), instance, log_dir + "/" + instance, 0750);
}

Result<UniqueFd> openLogFile(int dir_fd, const char* file) {
  // O_NONBLOCK only for the open: a FIFO put there must not hang the controller.
  UniqueFd fd(::openat(dir_fd, file,
                       O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0640));
  if (!fd.valid()) {
    int err = errno;
    return common::errnoStatus(
        err, std::string("cannot open ") + file + (err == ELOOP ? " (a symlink)" : ""));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return common::errnoStatus(errno, std::string("stat ") + file);
  if (!S_ISREG(st.st_mode)) return common::invalidArgument(std::string(file) + " is not a file");
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return common::errnoStatus(errno, std::string("fcntl ") + file);
  }
  return fd;
}

InstanceLogFiles::InstanceLogFiles(std::string log_dir, std::string instance)
    : log_dir_(std::move(log_dir)),
      instance_(std::move(instance)),
      dir_path_(log_dir_ + "/" + instance_) {}

Status InstanceLogFiles::open(bool access) {
  access_on_ = access;
  return reopen();
}

Status InstanceLogFiles::reopen() {
  // Both opened before either is replaced: a failure leaves the files in force alone.
  SCALWS_ASSIGN_OR_RETURN(UniqueFd dir, openInstanceLogDir(log_dir_, instance_));
  SCALWS_ASSIGN_OR_RETURN(UniqueFd error, openLogFile(dir.get(), "error.log"));
  UniqueFd access;
  if (access_on_) {
    SCALWS_ASSIGN_OR_RETURN(access, openLogFile(dir.get(), "access.log"));
  }
  error_ = std::move(error);
  access_ = std::move(access);
  return common::okStatus();
}

Result<UniqueFd> InstanceLogFiles::duplicateAccess() const {
  if (!access_.valid()) return UniqueFd();
  UniqueFd copy(::fcntl(access_.get(), F_DUPFD_CLOEXEC, 3));
  if (!copy.valid()) return common::errnoStatus(errno, "dup the access log");
  return copy;
}

void InstanceLogFiles::writeError(std::string_view line) const {
  if (!error_.valid()) return;
  std::string out(line);
  out.push_back('\n');
  // One write per line, like common::log: lines of several workers never interleave.
  ssize_t ignored = ::write(error_.get(), out.data(), out.size());
  (void)ignored;
}

}  // namespace scalws::controller
