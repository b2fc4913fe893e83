#include "worker/http/http_stream.h"

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

void HttpStream::reset() noexcept {
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
