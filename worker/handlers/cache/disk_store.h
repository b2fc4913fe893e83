// The disk tier of a cache: one file per primary key under cache.disk, holding the
// stored-entry bytes (stored_entry.h) of the variant stored last. Synchronous file work,
// run only on a cache's disk thread (disk_worker.h), never on an event loop.
//
// - Files are "<dir>/<h>/<hash>": <hash> the 16 hex digits of the key hash, <h> its first
//   two (256 subdirectories, made as needed), so no directory grows huge.
// - write() puts the bytes in "<dir>/tmp/<pid>.<n>" and renames it over the final name:
//   a reader sees the old file or the new one whole, never a partial one, and a worker
//   killed mid-write leaves only a temporary file (removed by the next scan). No fsync: a
//   file lost in a crash is a miss, and a torn one fails its checksum.
// - read() checks the size, the header, every section and the checksum, and that the file
//   holds the key asked for; a file that fails is unlinked and reported as a miss.
// - The bytes kept are counted in a total shared by the instance's processes (in the
//   memory tier's header); past max_disk the least recently written files go (trim(); reads do
//   not touch a file, so the order is that of writes, as the sandbox allows no utimensat).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::worker::cache {

class DiskStore {
 public:
  // `dir_fd`: the cache directory, opened before the sandbox (O_DIRECTORY|O_PATH is not
  // enough: files are made beneath it). `shared_bytes`: the instance-wide total.
  DiskStore(common::UniqueFd dir_fd, uint64_t max_bytes, uint64_t max_entry,
            std::atomic<uint64_t>& shared_bytes);

  // Opens (making it if missing) `path` for a DiskStore.
  static common::Result<common::UniqueFd> openDirectory(const std::string& path);

  enum class ReadResult { kFound, kMissing, kCorrupt };
  // The entry stored for `key` (hash `key_hash`), verified, into `out`.
  ReadResult read(uint64_t key_hash, std::string_view key, std::string& out);
  common::Status write(uint64_t key_hash, std::string_view bytes);
  void remove(uint64_t key_hash);
  // Removes every entry file; returns how many.
  size_t removeAll();
  // Removes the entry files whose stored URI `match` accepts (each file's head is read;
  // one that cannot be read as an entry is removed too); returns how many.
  size_t removeMatching(const std::function<bool(std::string_view uri)>& match);
  // Counts the files under the directory into the shared total (once per instance start)
  // and removes temporary files left by killed workers.
  void scan();
  // Removes the oldest files until the total is under 9/10 of max_disk; returns how many.
  size_t trim();

  uint64_t bytes() const { return shared_bytes_.load(std::memory_order_relaxed); }

 private:
  std::string relativePath(uint64_t key_hash) const;

  common::UniqueFd dir_fd_;
  uint64_t max_bytes_;
  uint64_t max_entry_;
  std::atomic<uint64_t>& shared_bytes_;
  uint64_t temp_counter_ = 0;
};

}  // namespace scalws::worker::cache
