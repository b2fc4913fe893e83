// Deadlines for many connections at O(1) per re-arm: one intrusive list per timeout length.
// A list holds entries of one duration, so appending keeps it sorted by deadline and only
// its head needs looking at. The owner sweeps with expire(now) from one loop timer.
#pragma once

#include <cstdint>
#include <vector>

namespace scalws::worker {

class TimeoutQueue;

class TimeoutEntry {
 public:
  virtual void onTimeout() noexcept = 0;
  bool armed() const { return list_ != nullptr; }
  uint64_t deadline() const { return deadline_; }

 protected:
  ~TimeoutEntry() = default;

 private:
  friend class TimeoutQueue;
  TimeoutEntry* prev_ = nullptr;
  TimeoutEntry* next_ = nullptr;
  struct TimeoutList* list_ = nullptr;
  uint64_t deadline_ = 0;
};

struct TimeoutList {
  uint64_t duration_ms = 0;
  TimeoutEntry* head = nullptr;
  TimeoutEntry* tail = nullptr;
};

class TimeoutQueue {
 public:
  TimeoutQueue() = default;
  TimeoutQueue(const TimeoutQueue&) = delete;
  TimeoutQueue& operator=(const TimeoutQueue&) = delete;

  // (Re)arms `entry` to fire `duration_ms` after `now_ms`.
  void arm(TimeoutEntry& entry, uint64_t duration_ms, uint64_t now_ms);
  void disarm(TimeoutEntry& entry);
  // Fires every entry whose deadline is <= now_ms (an entry is disarmed before it fires,
  // so onTimeout may re-arm or destroy-later its owner).
  void expire(uint64_t now_ms);
  // The earliest deadline, or UINT64_MAX when nothing is armed.
  uint64_t nextDeadline() const;

 private:
  TimeoutList& listFor(uint64_t duration_ms);
  std::vector<TimeoutList> lists_;  // few distinct durations; a vector beats a map here
};

}  // namespace scalws::worker
