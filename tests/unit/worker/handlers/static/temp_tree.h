// A temporary directory tree for the static handler's tests: created under $TMPDIR,
// removed with everything in it when the object goes.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace scalws::worker::testing {

class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "scalws-static-XXXXXX");
    char* made = ::mkdtemp(pattern.data());
    path_ = made != nullptr ? made : "";
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::string& path() const { return path_; }
  std::string at(std::string_view relative) const { return path_ + "/" + std::string(relative); }

  void write(std::string_view relative, std::string_view content) const {
    std::filesystem::path p = at(relative);
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
  }
  void mkdir(std::string_view relative) const { std::filesystem::create_directories(at(relative)); }
  void symlink(std::string_view target, std::string_view relative) const {
    std::filesystem::create_symlink(std::filesystem::path(target), at(relative));
  }
  // Sets the modification time to `seconds` since the epoch (and so changes the ctime).
  void setMtime(std::string_view relative, time_t seconds, long nsec = 0) const {
    timespec times[2] = {{seconds, nsec}, {seconds, nsec}};
    ::utimensat(AT_FDCWD, at(relative).c_str(), times, 0);
  }

 private:
  std::string path_;
};

// True when `fd` is an open descriptor of this process.
inline bool fdIsOpen(int fd) {
  return fd >= 0 && ::fcntl(fd, F_GETFD) != -1;
}

}  // namespace scalws::worker::testing
