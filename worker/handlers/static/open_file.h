// One opened file of a static route, as the open-file cache keeps it: the fd, the statx
// identity it was opened with, the rendered validators (ETag, Last-Modified), the
// Content-Type the route gives it and, for small files, the bytes themselves, so a hit
// answers with one writev and no read.
//
// Lifetime: reference counted on one loop. The cache holds one reference while the entry
// is in it; a handler holds one while it builds the response; the response writer holds
// one per FileSlice until the bytes left (FileSlice::owner). The fd is closed when the
// last reference goes, so eviction never closes an fd a response still sends from.
// A negative entry ("this precompressed variant does not exist") has no fd.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

#include "worker/handlers/static/doc_root.h"
#include "worker/http/ref_counted.h"

namespace scalws::worker {

class OpenFileCache;

class OpenFile final : public RefCounted {
 public:
  // Takes `fd` (may be -1 for a negative entry); `key` is the cache key (see
  // OpenFileCache), whose tail from `path_offset` is the NUL-terminated relative path.
  OpenFile(std::string key, size_t path_offset, int fd, const FileIdentity& identity);
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  int fd() const { return fd_; }
  bool missing() const { return fd_ < 0; }
  const FileIdentity& identity() const { return identity_; }
  uint64_t size() const { return identity_.size; }
  time_t mtimeSeconds() const { return static_cast<time_t>(identity_.mtime_ns / 1'000'000'000); }
  // "\"<ino>-<size>-<mtime ns>\"" in hex: strong, changes with any new version.
  std::string_view etag() const { return std::string_view(etag_, etag_len_); }
  std::string_view lastModified() const { return std::string_view(last_modified_, 29); }

  // Set by the handler the first time it uses an entry; the cache key guarantees every
  // user of one entry would compute the same value.
  std::string_view contentType() const { return content_type_; }
  void setContentType(std::string_view type) { content_type_.assign(type); }

  // The whole file when kept in memory (small files), else empty with hasBytes() false.
  bool hasBytes() const { return bytes_ != nullptr; }
  std::string_view bytes() const {
    return std::string_view(bytes_.get(), bytes_ ? identity_.size : 0);
  }

  std::string_view key() const { return key_; }
  const char* relativePath() const { return key_.c_str() + path_offset_; }

 private:
  friend class OpenFileCache;
  ~OpenFile();
  void onLastRelease() noexcept override;
  // Reads the whole file into memory; false (and nothing kept) when it changed size.
  bool keepBytes();

  std::string key_;
  size_t path_offset_;
  int fd_;
  FileIdentity identity_;
  char etag_[64];
  size_t etag_len_ = 0;
  char last_modified_[29];
  std::string content_type_;
  std::unique_ptr<char[]> bytes_;

  // Cache bookkeeping (OpenFileCache only).
  OpenFile* lru_prev_ = nullptr;
  OpenFile* lru_next_ = nullptr;
  uint64_t checked_at_ms_ = 0;
  uint64_t checked_turn_ = 0;
  bool in_cache_ = false;
};

}  // namespace scalws::worker
