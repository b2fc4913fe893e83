// The per-loop open-file cache of static routes: keeps opened files
// (fd, statx identity, rendered validators, small files' bytes) keyed by docroot, rules and
// relative path, so a hit costs at most one statx.
//
// Modes (per route, `open_file_cache`):
// - off:       every request opens the file; nothing is kept.
// - check:     a hit costs one statx of the path per loop turn; the entry is used only when
//              dev, ino, size, mtime and ctime all still match, else it is dropped and the
//              file opened again. Requests the loop handles in one turn (between two waits
//              for events, so microseconds apart and none blocked in between) share that
//              statx, as h2o's file cache lives one loop iteration: a changed, replaced or
//              deleted file is served stale at most until the turn in progress ends.
// - valid:<d>: an entry is trusted for <d> after its last check, then checked as above.
// Served bytes always come from an fd opened by DocRoot::openFile (openat2 beneath the
// root): a path statx that matches the identity proves the path still names that same
// inode; anything else reopens through openat2.
//
// Bounds: at most `max_entries` entries (each holds one fd, negative entries none) and
// `max_kept_bytes` of small files' bytes; least recently used entries go first. Eviction
// drops the cache's reference only (see open_file.h): the fd closes when no response uses
// it any more.
//
// Threading: one cache per WorkerLoop, used only on its thread; nothing is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/config/site_config.h"
#include "worker/handlers/static/doc_root.h"
#include "worker/handlers/static/open_file.h"
#include "worker/loop/loop_local.h"
#include "worker/metrics/loop_counters.h"

namespace scalws::worker {

struct FileLookup {
  const DocRoot* root = nullptr;
  // Key prefix naming the docroot, symlink rule and type table (StaticHandler builds it).
  std::string_view scope;
  std::string_view path;    // relative to the root, no leading '/'; "" is the root itself
  std::string_view suffix;  // appended to path: ".br", ".gz" for precompressed variants
  bool variant = false;     // a variant's Content-Type is its original's, not its own
  // Remember "does not exist" (ENOENT) as a negative entry: for variant probes, which
  // miss far more often than they hit.
  bool remember_missing = false;
  common::config::OpenFileCacheConfig policy;
  uint64_t now_ms = 0;
  // The loop's turn (WorkerLoop::turn()): an entry checked in this turn is not checked
  // again. 0 is no turn: every hit is checked.
  uint64_t turn = 0;
};

struct FileResult {
  // A retained reference: call release() once the response has been handed to the writer.
  OpenFile* file = nullptr;
  // When file is null: the errno of the open (ENOENT, EACCES, EXDEV, ELOOP, ...), EISDIR
  // for a directory, ENODEV for a FIFO, socket or device.
  int error = 0;
};

class WorkerLoop;

// One per loop (a LoopLocal: the loop holds it without knowing it), never shared.
class OpenFileCache final : public LoopLocal {
 public:
  struct Limits {
    size_t max_entries = 1024;
    size_t max_kept_bytes = 8u << 20;
    // Files up to this size are kept in memory. Chosen so the head (a few hundred bytes)
    // and the body fit one 16 KiB output block: one writev, no allocation.
    size_t keep_file_max = 15 * 1024;
  };

  // Limits for a loop of this process: entries bounded by a share of RLIMIT_NOFILE.
  static Limits defaultLimits();

  explicit OpenFileCache(Limits limits);
  OpenFileCache() : OpenFileCache(defaultLimits()) {}
  // The loop's own (WorkerLoop::local<OpenFileCache>()), counting into its metrics.
  explicit OpenFileCache(WorkerLoop& loop);
  ~OpenFileCache() override;
  OpenFileCache(const OpenFileCache&) = delete;
  OpenFileCache& operator=(const OpenFileCache&) = delete;

  FileResult acquire(const FileLookup& lookup) noexcept;

  // Where hits and misses are counted (the loop's metrics); may stay null.
  void setCounters(LoopCounters* counters) { counters_ = counters; }

  // Drops every entry (their fds close once unused).
  void clear() noexcept;

  size_t size() const { return entries_.size(); }
  size_t keptBytes() const { return kept_bytes_; }
  const Limits& limits() const { return limits_; }
  // Least recently used first, for tests.
  OpenFile* lruTailForTest() const { return lru_tail_; }

 private:
  FileResult openFresh(const FileLookup& lookup, bool cacheable) noexcept;
  void buildKey(const FileLookup& lookup);
  void insert(OpenFile* file) noexcept;
  void remove(OpenFile* file) noexcept;
  void touch(OpenFile* file) noexcept;
  void evictOldest(size_t count) noexcept;

  Limits limits_;
  std::unordered_map<std::string_view, OpenFile*> entries_;  // views into OpenFile::key_
  OpenFile* lru_head_ = nullptr;                             // most recently used
  OpenFile* lru_tail_ = nullptr;
  size_t kept_bytes_ = 0;
  std::string scratch_;  // the key being looked up; reused, so lookups do not allocate
  size_t path_offset_ = 0;
  LoopCounters* counters_ = nullptr;
};

}  // namespace scalws::worker
