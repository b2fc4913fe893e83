// A loop's side of the caches it answers from: the leases that keep pinned entries alive
// while their bytes wait in an output queue, and the mailbox that brings a disk thread's
// results back to the loop. A LoopLocal: request.loop->local<cache::CacheLoop>().
#pragma once

#include <uv.h>

#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "worker/handlers/cache/memory_store.h"
#include "worker/http/ref_counted.h"
#include "worker/loop/loop_local.h"

namespace scalws::worker {
class WorkerLoop;
}

namespace scalws::worker::cache {

inline int64_t wallClockMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);  // vDSO: no system call
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
}

inline int64_t monotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // the same clock in every process
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
}

class CacheLoop;

// Holds one pin of a MemoryStore entry; the last release unpins it.
class PinLease final : public RefCounted {
 public:
  explicit PinLease(CacheLoop& home) : home_(home) {}
  void hold(MemoryStore& store, const MemoryStore::Pin& pin) {
    store_ = &store;
    pin_ = pin;
  }

 private:
  void onLastRelease() noexcept override;
  CacheLoop& home_;
  MemoryStore* store_ = nullptr;
  MemoryStore::Pin pin_;
};

// Functions posted from other threads, run on the loop. Shared with the threads that post
// (they may outlive the loop: posts after it stopped are dropped).
class LoopMailbox {
 public:
  // A mailbox whose functions run on `loop`; close() it on that loop before the loop ends.
  static std::shared_ptr<LoopMailbox> open(uv_loop_t* loop);
  void post(std::function<void()> fn);
  // Drops what is pending and every later post. Idempotent; on the loop's thread.
  void close();

 private:
  static void onAsync(uv_async_t* async);

  std::mutex mutex_;
  std::vector<std::function<void()>> pending_;
  uv_async_t* async_ = nullptr;  // null once closed
};

class CacheLoop final : public LoopLocal {
 public:
  explicit CacheLoop(WorkerLoop& loop);
  ~CacheLoop() override;
  CacheLoop(const CacheLoop&) = delete;
  CacheLoop& operator=(const CacheLoop&) = delete;

  // A lease with one reference, holding `pin` of `store`.
  PinLease* lease(MemoryStore& store, const MemoryStore::Pin& pin);
  const std::shared_ptr<LoopMailbox>& mailbox() const { return mailbox_; }
  // True at most once a second per loop: time for MemoryStore::sweep().
  bool sweepDue(int64_t now_ms);

  void onLoopStopping() noexcept override;

 private:
  friend class PinLease;

  std::vector<std::unique_ptr<PinLease>> leases_;
  std::vector<PinLease*> free_leases_;
  std::shared_ptr<LoopMailbox> mailbox_;
  int64_t last_sweep_ms_ = 0;
};

}  // namespace scalws::worker::cache
