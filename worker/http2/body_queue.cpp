#include "worker/http2/body_queue.h"

#include <algorithm>

namespace scalws::worker::http2 {

void BodyQueue::append(std::string_view data) {
  if (data.empty()) return;
  if (!segments_.empty() && head_ < segments_.size() && segments_.back().kind == Kind::kOwned &&
      segments_.back().offset + segments_.back().length == owned_.size()) {
    segments_.back().length += data.size();
  } else {
    segments_.push_back(Segment{Kind::kOwned, owned_.size(), data.size()});
  }
  owned_.append(data);
  size_ += data.size();
}

void BodyQueue::appendStable(std::string_view data) {
  if (data.empty()) return;
  Segment s{Kind::kStable, 0, data.size()};
  s.data = data.data();
  segments_.push_back(s);
  size_ += data.size();
}

void BodyQueue::appendFile(const FileSlice& file) {
  if (file.length == 0) return;
  Segment s{Kind::kFile, file.offset, file.length};
  s.fd = file.fd;
  s.owner = file.owner;
  if (s.owner != nullptr) s.owner->retain();
  segments_.push_back(s);
  size_ += file.length;
}

void BodyQueue::consume(uint64_t n) {
  size_ -= n;
  while (n > 0 && head_ < segments_.size()) {
    Segment& s = segments_[head_];
    uint64_t take = std::min(n, s.length);
    s.length -= take;
    n -= take;
    if (s.kind == Kind::kStable) {
      s.data += take;
    } else {
      s.offset += take;
    }
    if (s.kind == Kind::kOwned) owned_consumed_ += take;
    if (s.length == 0) {
      if (s.kind == Kind::kFile && s.owner != nullptr) s.owner->release();
      ++head_;
    }
  }
  if (head_ == segments_.size()) {
    segments_.clear();
    head_ = 0;
    owned_.clear();  // keeps its capacity for the next response on this stream object
    owned_consumed_ = 0;
  } else if (owned_consumed_ > kCompactAfter && owned_consumed_ * 2 > owned_.size()) {
    // A producer that keeps the queue from ever emptying: drop the sent prefix now.
    owned_.erase(0, owned_consumed_);
    for (size_t i = head_; i < segments_.size(); ++i) {
      if (segments_[i].kind == Kind::kOwned) segments_[i].offset -= owned_consumed_;
    }
    owned_consumed_ = 0;
  }
}

void BodyQueue::clear() {
  for (size_t i = head_; i < segments_.size(); ++i) {
    if (segments_[i].kind == Kind::kFile && segments_[i].owner != nullptr) {
      segments_[i].owner->release();
    }
  }
  segments_.clear();
  head_ = 0;
  owned_.clear();
  owned_consumed_ = 0;
  size_ = 0;
}

}  // namespace scalws::worker::http2
