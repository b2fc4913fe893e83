#include "worker/net/output_queue.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace scalws::worker {
namespace {
constexpr int kMaxIov = 64;
}

void OutputQueue::ensureCapacity(size_t extra) {
  if (used_ + extra <= capacity_) return;
  if (!storage_ && extra <= BufferPool::kBlockSize) {
    storage_ = pool_.take();
    capacity_ = BufferPool::kBlockSize;
    return;
  }
  size_t next = std::max(capacity_ * 2, used_ + extra);
  std::unique_ptr<char[]> bigger(new char[next]);
  if (used_ > 0) std::memcpy(bigger.get(), storage_.get(), used_);
  if (capacity_ == BufferPool::kBlockSize) {
    pool_.give(std::move(storage_));
  }
  storage_ = std::move(bigger);
  capacity_ = next;
}

char* OutputQueue::reserve(size_t n) {
  ensureCapacity(n);
  return storage_.get() + used_;
}

void OutputQueue::commit(size_t n) {
  if (n == 0) return;
  if (!segments_.empty() && segments_.back().kind == Kind::kOwned &&
      segments_.back().offset + segments_.back().length == used_) {
    segments_.back().length += n;
  } else {
    segments_.push_back(Segment{Kind::kOwned, used_, n});
  }
  used_ += n;
  pending_ += n;
}

void OutputQueue::append(std::string_view data) {
  if (data.empty()) return;
  std::memcpy(reserve(data.size()), data.data(), data.size());
  commit(data.size());
}

void OutputQueue::appendStable(std::string_view data) {
  if (data.empty()) return;
  Segment s{Kind::kStable, 0, data.size()};
  s.data = data.data();
  segments_.push_back(s);
  pending_ += data.size();
}

void OutputQueue::appendFile(const FileSlice& file) {
  if (file.length == 0) return;
  Segment s{Kind::kFile, file.offset, file.length};
  s.fd = file.fd;
  s.owner = file.owner;
  if (s.owner != nullptr) s.owner->retain();
  segments_.push_back(s);
  pending_ += file.length;
}

void OutputQueue::consume(uint64_t n) {
  pending_ -= n;
  while (n > 0 && head_ < segments_.size()) {
    Segment& s = segments_[head_];
    uint64_t take = std::min<uint64_t>(n, s.length);
    s.length -= take;
    n -= take;
    if (s.kind == Kind::kStable) {
      s.data += take;
    } else {
      s.offset += take;
    }
    if (s.length == 0) {
      if (s.kind == Kind::kFile && s.owner != nullptr) s.owner->release();
      ++head_;
    }
  }
  if (head_ == segments_.size()) {
    segments_.clear();
    head_ = 0;
    releaseStorage();
  }
}

void OutputQueue::releaseStorage() {
  used_ = 0;
  if (capacity_ == BufferPool::kBlockSize) pool_.give(std::move(storage_));
  storage_.reset();
  capacity_ = 0;
}

bool OutputQueue::truncate(const Mark& m) {
  if (m.flushes != flushes_ || m.segments > segments_.size()) return false;
  for (size_t i = m.segments; i < segments_.size(); ++i) {
    if (segments_[i].kind == Kind::kFile && segments_[i].owner != nullptr) {
      segments_[i].owner->release();
    }
  }
  segments_.resize(m.segments);
  used_ = m.used;
  pending_ = m.pending;
  // An owned segment that grew past the mark (commit() merges into the last one) is cut
  // back to the mark's bytes.
  if (!segments_.empty() && segments_.back().kind == Kind::kOwned &&
      segments_.back().offset + segments_.back().length > used_) {
    segments_.back().length = used_ - segments_.back().offset;
  }
  if (segments_.empty()) releaseStorage();
  return true;
}

OutputQueue::FlushResult OutputQueue::flush(Transport& transport) {
  ++flushes_;
  while (head_ < segments_.size()) {
    const Segment& first = segments_[head_];
    ssize_t n;
    if (first.kind == Kind::kFile) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(first.length, 1u << 30));
      n = transport.sendFile(first.fd, first.offset, chunk);
    } else {
      iovec iov[kMaxIov];
      int count = 0;
      for (size_t i = head_; i < segments_.size() && count < kMaxIov; ++i) {
        const Segment& s = segments_[i];
        if (s.kind == Kind::kFile) break;
        const char* base = s.kind == Kind::kOwned ? storage_.get() + s.offset : s.data;
        iov[count].iov_base = const_cast<char*>(base);
        iov[count].iov_len = s.length;
        ++count;
      }
      n = transport.writev(iov, count);
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return FlushResult::kBlocked;
      last_errno_ = errno;
      return FlushResult::kError;
    }
    if (n == 0) {
      // sendfile returning 0 means the file ended early (truncated under us): the promised
      // Content-Length can no longer be met, so the connection must go.
      if (first.kind == Kind::kFile) {
        last_errno_ = EIO;
        return FlushResult::kError;
      }
      return FlushResult::kBlocked;
    }
    consume(static_cast<uint64_t>(n));
  }
  return FlushResult::kDone;
}

void OutputQueue::clear() {
  for (size_t i = head_; i < segments_.size(); ++i) {
    if (segments_[i].kind == Kind::kFile && segments_[i].owner != nullptr) {
      segments_[i].owner->release();
    }
  }
  segments_.clear();
  head_ = 0;
  pending_ = 0;
  releaseStorage();
}

}  // namespace scalws::worker
