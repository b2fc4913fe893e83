#include "controller/state/state_disk.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace scalws::controller::state {

bool StateDisk::check() {
  struct statvfs st;
  if (::statvfs(dir_.c_str(), &st) != 0) {
    // Cannot tell: keep the last answer, say why once.
    std::string error = std::strerror(errno);
    if (error != error_) LOG_WARN("state dir %s: statvfs: %s", dir_.c_str(), error.c_str());
    error_ = error;
    return full_;
  }
  error_.clear();
  // The controller runs as root: the blocks reserved for root are its to use.
  free_bytes_ = static_cast<uint64_t>(st.f_bfree) * st.f_frsize;
  free_inodes_ = st.f_ffree;
  // A filesystem without inode counts (f_files == 0, e.g. some FUSE) never runs out of them.
  bool full = free_bytes_ < kFullBelowBytes || (st.f_files > 0 && free_inodes_ == 0);
  if (full && (!full_ || !checked_)) {
    LOG_ERROR(
        "state dir %s: no space left on device (%llu bytes, %llu inodes free): the "
        "state is kept, changes to it are refused until space is freed",
        dir_.c_str(), static_cast<unsigned long long>(free_bytes_),
        static_cast<unsigned long long>(free_inodes_));
  } else if (!full && full_) {
    LOG_INFO("state dir %s: space again (%llu bytes free): changes are accepted", dir_.c_str(),
             static_cast<unsigned long long>(free_bytes_));
  }
  full_ = full;
  checked_ = true;
  return full_;
}

ipc::Json StateDisk::status() const {
  std::string message;
  if (full_) {
    message =
        "no space left on device: the state is kept, changes to it are refused until "
        "space is freed";
  }
  return ipc::Json{{"full", full_},
                   {"free_bytes", free_bytes_},
                   {"free_inodes", free_inodes_},
                   {"message", message}};
}

}  // namespace scalws::controller::state
