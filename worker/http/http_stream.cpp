#include "worker/http/http_stream.h"

#include "worker/limits/shared_limits.h"

namespace scalws::worker {

bool HttpStream::moveTo(ResponseState next) noexcept {
  using S = ResponseState;
  bool allowed = false;
  switch (next) {
    case S::kNone:  // rewind() and reset(); reset() goes through from any state
      allowed = response_ == S::kStarted || response_ == S::kFinished;
      break;
    case S::kStarted:
      allowed = response_ == S::kNone;
      break;
    case S::kFinished:
      allowed = response_ == S::kStarted;
      break;
    case S::kDead:
      allowed = response_ != S::kDead;
      break;
  }
  if (!allowed) return false;
  response_ = next;
  if (next == S::kFinished || next == S::kDead) {
    releaseLimit();
    writable_observer_ = nullptr;
    if (next == S::kDead && in_flight_ != nullptr) abortInFlight();
    in_flight_ = nullptr;
  }
  return true;
}

void HttpStream::die() noexcept {
  moveTo(ResponseState::kDead);
}

void HttpStream::abortInFlight() noexcept {
  if (in_flight_ == nullptr) return;
  InFlight* f = in_flight_;
  in_flight_ = nullptr;
  f->abort();
}

void HttpStream::rewind() noexcept {
  if (moveTo(ResponseState::kNone)) body_bytes_ = 0;
}

void HttpStream::holdLimit(std::shared_ptr<limits::SharedLimits> table, uint32_t slot,
                           uint64_t key) noexcept {
  releaseLimit();
  limit_table_ = std::move(table);
  limit_slot_ = slot;
  limit_key_ = key;
}

void HttpStream::releaseLimitSlot() noexcept {
  limit_table_->table().release(limit_slot_, limit_key_);
  limit_slot_ = 0;
  limit_key_ = 0;
  limit_table_.reset();
}

void HttpStream::reset() noexcept {
  releaseLimit();
  response_ = ResponseState::kNone;
  handler_ = nullptr;
  action_ = common::metrics::Action::kOther;
  in_flight_ = nullptr;
  writable_observer_ = nullptr;
  status_ = 0;
  body_bytes_ = 0;
  body_limit_ = UINT64_MAX;
  request_.setBodySink(nullptr);
  // The next request may fail in its head, before anything sets these: its error must not
  // take the previous route's rules (nor outlive their snapshot, after a reload).
  request_.response_rules = nullptr;
  arena_.reset();
}

}  // namespace scalws::worker
