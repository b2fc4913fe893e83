// The thread beside a process's event loops that does a cache's disk work (disk_store.h),
// so no loop ever waits for a file: reads of entries a memory miss asks for, writes of
// entries a fill stored, removals. One per cache per process, started when the process
// attaches to the cache (after a fork, so each worker process has its own).
//
// Jobs run in order. A read's callback runs on the disk thread: the caller hops back to
// its loop from there (a uv_async). Writes wait in a queue bounded in bytes: past it a
// write is dropped (the entry stays in memory only), never does a fill wait for the disk.
// The first disk thread of an instance counts the directory (scan()); the destructor
// finishes the job under way, drops the rest and joins.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "worker/handlers/cache/disk_store.h"

namespace scalws::worker::cache {

class DiskWorker {
 public:
  using ReadDone = std::function<void(DiskStore::ReadResult, std::string bytes)>;
  static constexpr uint64_t kMaxQueuedWriteBytes = 64ull << 20;

  // `scanned`: the instance-wide flag saying whether the directory was counted.
  DiskWorker(std::unique_ptr<DiskStore> store, std::atomic<uint32_t>& scanned);
  ~DiskWorker();
  DiskWorker(const DiskWorker&) = delete;
  DiskWorker& operator=(const DiskWorker&) = delete;

  void read(uint64_t key_hash, std::string key, ReadDone done);
  // False when the queue was full and the write dropped.
  bool write(uint64_t key_hash, std::string bytes);
  void remove(uint64_t key_hash);
  // Removes every entry file (`match` null) or those whose URI it accepts; `done` gets how
  // many, on the disk thread.
  void removeMatching(std::function<bool(std::string_view uri)> match,
                      std::function<void(size_t)> done);
  // Waits until every job queued so far ran (tests, orderly shutdown).
  void drain();

  uint64_t diskBytes() const { return store_->bytes(); }

 private:
  struct Job {
    enum class Kind { kRead, kWrite, kRemove, kRemoveMatching } kind = Kind::kRead;
    uint64_t key_hash = 0;
    std::string data;  // kRead: the key; kWrite: the entry
    ReadDone read_done;
    std::function<bool(std::string_view)> match;
    std::function<void(size_t)> count_done;
  };
  void run();
  void push(Job job);

  std::unique_ptr<DiskStore> store_;
  std::atomic<uint32_t>& scanned_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<Job> jobs_;
  uint64_t queued_write_bytes_ = 0;
  uint64_t pushed_ = 0;
  uint64_t done_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace scalws::worker::cache
