#include "worker/handlers/cache/disk_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "worker/handlers/cache/stored_entry.h"

namespace scalws::worker::cache {
namespace {

constexpr char kTempDir[] = "tmp";

bool isHexName(const char* name, size_t length) {
  size_t n = 0;
  for (; name[n] != '\0'; ++n) {
    char c = name[n];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return n == length;
}

struct FileInfo {
  std::string path;  // relative to the cache directory
  int64_t mtime_ns = 0;
  uint64_t size = 0;
};

// Calls fn(relative path, stat) for each entry file of the cache directory.
template <typename Fn>
void forEachEntryFile(int dir_fd, Fn&& fn) {
  for (unsigned sub = 0; sub < 256; ++sub) {
    char sub_name[3];
    std::snprintf(sub_name, sizeof(sub_name), "%02x", sub);
    int fd = ::openat(dir_fd, sub_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      ::close(fd);
      continue;
    }
    while (dirent* e = ::readdir(dir)) {
      if (!isHexName(e->d_name, 16)) continue;
      struct stat st;
      if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
      fn(std::string(sub_name) + "/" + e->d_name, st);
    }
    ::closedir(dir);
  }
}

}  // namespace

DiskStore::DiskStore(common::UniqueFd dir_fd, uint64_t max_bytes, uint64_t max_entry,
                     std::atomic<uint64_t>& shared_bytes)
    : dir_fd_(std::move(dir_fd)),
      max_bytes_(max_bytes),
      max_entry_(max_entry),
      shared_bytes_(shared_bytes) {}

common::Result<common::UniqueFd> DiskStore::openDirectory(const std::string& path) {
  // Make the path's missing directories, then the temporary directory in it.
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    std::string prefix = path.substr(0, at);
    if (::mkdir(prefix.c_str(), 0750) != 0 && errno != EEXIST) {
      return common::errnoStatus(errno, "cache directory \"" + prefix + "\"");
    }
  }
  common::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return common::errnoStatus(errno, "cache directory \"" + path + "\"");
  if (::mkdirat(fd.get(), kTempDir, 0750) != 0 && errno != EEXIST) {
    return common::errnoStatus(errno, "cache directory \"" + path + "/tmp\"");
  }
  return fd;
}

std::string DiskStore::relativePath(uint64_t key_hash) const {
  char name[32];
  std::snprintf(name, sizeof(name), "%02x/%016llx", static_cast<unsigned>(key_hash >> 56),
                static_cast<unsigned long long>(key_hash));
  return name;
}

DiskStore::ReadResult DiskStore::read(uint64_t key_hash, std::string_view key, std::string& out) {
  out.clear();
  std::string path = relativePath(key_hash);
  common::UniqueFd fd(::openat(dir_fd_.get(), path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return ReadResult::kMissing;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return ReadResult::kMissing;
  uint64_t size = static_cast<uint64_t>(st.st_size);
  bool fits =
      size <= max_entry_ + kEntryHeaderSize + 2 * kMaxKeyBytes + kMaxVaryBytes + kMaxHeadBytes;
  if (fits) {
    out.resize(size);
    size_t got = 0;
    while (got < size) {
      ssize_t n = ::read(fd.get(), out.data() + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    out.resize(got);
  }
  common::Result<EntryView> view =
      fits ? parseEntry(out, true) : common::Result<EntryView>(common::invalidArgument(""));
  if (!view.ok()) {
    // Torn, truncated or damaged: dropped, never served.
    if (::unlinkat(dir_fd_.get(), path.c_str(), 0) == 0) {
      shared_bytes_.fetch_sub(std::min(size, bytes()), std::memory_order_relaxed);
    }
    out.clear();
    return ReadResult::kCorrupt;
  }
  if (view->key != key) {
    out.clear();
    return ReadResult::kMissing;  // another key with the same hash
  }
  return ReadResult::kFound;
}

common::Status DiskStore::write(uint64_t key_hash, std::string_view entry) {
  std::string path = relativePath(key_hash);
  std::string sub = path.substr(0, 2);
  if (::mkdirat(dir_fd_.get(), sub.c_str(), 0750) != 0 && errno != EEXIST) {
    return common::errnoStatus(errno, "cache directory " + sub);
  }
  char temp[64];
  std::snprintf(temp, sizeof(temp), "%s/%d.%llu", kTempDir, static_cast<int>(::getpid()),
                static_cast<unsigned long long>(++temp_counter_));
  int fd =
      ::openat(dir_fd_.get(), temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) return common::errnoStatus(errno, "cache file " + std::string(temp));
  size_t done = 0;
  int err = 0;
  while (done < entry.size()) {
    ssize_t n = ::write(fd, entry.data() + done, entry.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (err != 0) {
    ::unlinkat(dir_fd_.get(), temp, 0);
    return common::errnoStatus(err, "cache file " + std::string(temp));
  }
  struct stat old;
  uint64_t replaced = 0;
  if (::fstatat(dir_fd_.get(), path.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0) {
    replaced = static_cast<uint64_t>(old.st_size);
  }
  if (::renameat(dir_fd_.get(), temp, dir_fd_.get(), path.c_str()) != 0) {
    err = errno;
    ::unlinkat(dir_fd_.get(), temp, 0);
    return common::errnoStatus(err, "cache file " + path);
  }
  shared_bytes_.fetch_add(entry.size(), std::memory_order_relaxed);
  shared_bytes_.fetch_sub(std::min(replaced, bytes()), std::memory_order_relaxed);
  if (bytes() > max_bytes_) trim();
  return common::okStatus();
}

void DiskStore::remove(uint64_t key_hash) {
  std::string path = relativePath(key_hash);
  struct stat st;
  if (::fstatat(dir_fd_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (::unlinkat(dir_fd_.get(), path.c_str(), 0) == 0) {
    shared_bytes_.fetch_sub(std::min<uint64_t>(static_cast<uint64_t>(st.st_size), bytes()),
                            std::memory_order_relaxed);
  }
}

size_t DiskStore::removeAll() {
  size_t removed = 0;
  forEachEntryFile(dir_fd_.get(), [&](const std::string& path, const struct stat&) {
    if (::unlinkat(dir_fd_.get(), path.c_str(), 0) == 0) ++removed;
  });
  scan();
  return removed;
}

size_t DiskStore::removeMatching(const std::function<bool(std::string_view uri)>& match) {
  size_t removed = 0;
  std::string meta;
  forEachEntryFile(dir_fd_.get(), [&](const std::string& path, const struct stat&) {
    common::UniqueFd fd(::openat(dir_fd_.get(), path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return;
    // The header says how long the key, URI, Vary and head sections are (stored_entry.h).
    meta.resize(kEntryHeaderSize + 2 * kMaxKeyBytes + kMaxVaryBytes + kMaxHeadBytes);
    ssize_t n = ::pread(fd.get(), meta.data(), meta.size(), 0);
    meta.resize(n > 0 ? static_cast<size_t>(n) : 0);
    common::Result<EntryView> view = parseEntryMeta(meta);
    if (view.ok() && !match(view->uri)) return;
    if (::unlinkat(dir_fd_.get(), path.c_str(), 0) == 0) ++removed;
  });
  scan();
  return removed;
}

void DiskStore::scan() {
  uint64_t total = 0;
  forEachEntryFile(dir_fd_.get(), [&](const std::string&, const struct stat& st) {
    total += static_cast<uint64_t>(st.st_size);
  });
  shared_bytes_.store(total, std::memory_order_relaxed);
  // Temporary files of writers that died mid-write. Another live worker's temporary file
  // removed here only costs that worker its write (its rename fails).
  int fd = ::openat(dir_fd_.get(), kTempDir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return;
  }
  std::string own = std::to_string(::getpid()) + ".";
  while (dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name == "." || name == ".." || name.substr(0, own.size()) == own) continue;
    ::unlinkat(fd, e->d_name, 0);
  }
  ::closedir(dir);
}

size_t DiskStore::trim() {
  std::vector<FileInfo> files;
  uint64_t total = 0;
  forEachEntryFile(dir_fd_.get(), [&](const std::string& path, const struct stat& st) {
    int64_t mtime = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    files.push_back(FileInfo{path, mtime, static_cast<uint64_t>(st.st_size)});
    total += static_cast<uint64_t>(st.st_size);
  });
  size_t removed = 0;
  uint64_t target = max_bytes_ / 10 * 9;
  if (total > max_bytes_) {
    std::sort(files.begin(), files.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.mtime_ns < b.mtime_ns; });
    for (const FileInfo& f : files) {
      if (total <= target) break;
      if (::unlinkat(dir_fd_.get(), f.path.c_str(), 0) == 0) {
        total -= f.size;
        ++removed;
      }
    }
  }
  shared_bytes_.store(total, std::memory_order_relaxed);  // the count, corrected by the scan
  return removed;
}

}  // namespace scalws::worker::cache
