#include "worker/http3/body_buffer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace scalws::worker::http3 {

void BodyBuffer::append(std::string_view data) {
  appended_ += data.size();
  while (!data.empty()) {
    // Bytes can go after the last block's even when part of it was handed out: views
    // already given cover only what was there, and the block never moves.
    if (segments_.empty() || segments_.back().kind != Kind::kBlock ||
        segments_.back().length == BufferPool::kBlockSize) {
      Segment s;
      s.kind = Kind::kBlock;
      s.block = pool_.take();
      s.data = reinterpret_cast<const uint8_t*>(s.block.get());
      segments_.push_back(std::move(s));
    }
    Segment& s = segments_.back();
    size_t room = BufferPool::kBlockSize - static_cast<size_t>(s.length);
    size_t n = std::min(room, data.size());
    std::memcpy(s.block.get() + s.length, data.data(), n);
    s.length += n;
    data.remove_prefix(n);
  }
}

void BodyBuffer::appendStable(std::string_view data) {
  if (data.empty()) return;
  Segment s;
  s.kind = Kind::kStable;
  s.data = reinterpret_cast<const uint8_t*>(data.data());
  s.length = data.size();
  segments_.push_back(std::move(s));
  appended_ += data.size();
}

void BodyBuffer::appendFile(const FileSlice& file) {
  if (file.length == 0) return;
  Segment s;
  s.kind = Kind::kFile;
  s.fd = file.fd;
  s.offset = file.offset;
  s.length = file.length;
  s.owner = file.owner;
  if (s.owner != nullptr) s.owner->retain();
  segments_.push_back(std::move(s));
  appended_ += file.length;
}

bool BodyBuffer::readFileBlock(size_t index) {
  // The next block of the file becomes a block segment of its own just before the rest of
  // the slice; the slice shrinks by what was read.
  Segment& file = segments_[index];
  std::unique_ptr<char[]> block = pool_.take();
  size_t want = static_cast<size_t>(std::min<uint64_t>(file.length, BufferPool::kBlockSize));
  ssize_t n;
  do {
    n = ::pread(file.fd, block.get(), want, static_cast<off_t>(file.offset));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    // A file that shrank or failed under us: the response cannot be completed.
    pool_.give(std::move(block));
    failed_ = true;
    return false;
  }
  file.offset += static_cast<uint64_t>(n);
  file.length -= static_cast<uint64_t>(n);
  Segment s;
  s.kind = Kind::kBlock;
  s.block = std::move(block);
  s.data = reinterpret_cast<const uint8_t*>(s.block.get());
  s.length = static_cast<uint64_t>(n);
  if (file.length == 0) {
    release(file);
    segments_[index] = std::move(s);
  } else {
    segments_.insert(segments_.begin() + static_cast<std::ptrdiff_t>(index), std::move(s));
  }
  return true;
}

size_t BodyBuffer::take(nghttp3_vec* out, size_t max) {
  size_t count = 0;
  bool read_one = false;
  while (count < max && first_unsent_ < segments_.size()) {
    Segment& s = segments_[first_unsent_];
    if (s.kind == Kind::kFile) {
      if (read_one || !readFileBlock(first_unsent_)) break;
      read_one = true;
      continue;  // the same index now holds the block just read
    }
    uint64_t left = s.length - s.sent;
    if (left == 0) {
      // A block still filling can get more bytes later; every other segment is done.
      if (first_unsent_ + 1 == segments_.size()) break;
      ++first_unsent_;
      continue;
    }
    out[count].base = const_cast<uint8_t*>(s.data + s.sent);
    out[count].len = static_cast<size_t>(left);
    ++count;
    s.sent = s.length;
    sent_ += left;
    if (first_unsent_ + 1 < segments_.size()) ++first_unsent_;
  }
  return count;
}

void BodyBuffer::acknowledge(uint64_t n) {
  acked_ += n;
  while (n > 0 && !segments_.empty()) {
    Segment& s = segments_.front();
    uint64_t k = std::min(n, s.sent - s.acked);
    s.acked += k;
    n -= k;
    if (s.acked < s.length || s.kind == Kind::kFile) break;
    if (s.kind == Kind::kBlock && s.length < BufferPool::kBlockSize && segments_.size() == 1) {
      // The only block and not full: keep it for the bytes still to come, empty.
      s.length = s.sent = s.acked = 0;
      break;
    }
    release(s);
    segments_.pop_front();
    if (first_unsent_ > 0) --first_unsent_;
  }
}

void BodyBuffer::release(Segment& s) {
  if (s.kind == Kind::kBlock && s.block) pool_.give(std::move(s.block));
  if (s.kind == Kind::kFile && s.owner != nullptr) {
    s.owner->release();
    s.owner = nullptr;
  }
}

void BodyBuffer::clear() {
  for (Segment& s : segments_) release(s);
  segments_.clear();
  first_unsent_ = 0;
  appended_ = sent_ = acked_ = 0;
  failed_ = false;
}

}  // namespace scalws::worker::http3
