#include "worker/loop/timeout_queue.h"

namespace scalws::worker {

TimeoutList& TimeoutQueue::listFor(uint64_t duration_ms) {
  for (TimeoutList& l : lists_) {
    if (l.duration_ms == duration_ms) return l;
  }
  // Durations come from the config; a reload may add some, and lists are never removed
  // while entries may point at them. Reserve so growth never moves a list in use.
  if (lists_.capacity() == 0) lists_.reserve(32);
  if (lists_.size() == lists_.capacity()) {
    // More distinct timeouts than anyone configures: share the closest list instead of
    // reallocating under armed entries.
    TimeoutList* best = &lists_.front();
    for (TimeoutList& l : lists_) {
      if (l.duration_ms <= duration_ms && l.duration_ms > best->duration_ms) best = &l;
    }
    return *best;
  }
  lists_.push_back(TimeoutList{duration_ms, nullptr, nullptr});
  return lists_.back();
}

void TimeoutQueue::arm(TimeoutEntry& e, uint64_t duration_ms, uint64_t now_ms) {
  disarm(e);
  TimeoutList& l = listFor(duration_ms);
  e.deadline_ = now_ms + duration_ms;
  e.list_ = &l;
  e.prev_ = l.tail;
  e.next_ = nullptr;
  if (l.tail != nullptr) {
    l.tail->next_ = &e;
  } else {
    l.head = &e;
  }
  l.tail = &e;
}

void TimeoutQueue::disarm(TimeoutEntry& e) {
  TimeoutList* l = e.list_;
  if (l == nullptr) return;
  if (e.prev_ != nullptr) {
    e.prev_->next_ = e.next_;
  } else {
    l->head = e.next_;
  }
  if (e.next_ != nullptr) {
    e.next_->prev_ = e.prev_;
  } else {
    l->tail = e.prev_;
  }
  e.prev_ = e.next_ = nullptr;
  e.list_ = nullptr;
}

void TimeoutQueue::expire(uint64_t now_ms) {
  for (TimeoutList& l : lists_) {
    while (l.head != nullptr && l.head->deadline_ <= now_ms) {
      TimeoutEntry* e = l.head;
      disarm(*e);
      e->onTimeout();
    }
  }
}

uint64_t TimeoutQueue::nextDeadline() const {
  uint64_t next = UINT64_MAX;
  for (const TimeoutList& l : lists_) {
    if (l.head != nullptr && l.head->deadline_ < next) next = l.head->deadline_;
  }
  return next;
}

}  // namespace scalws::worker
