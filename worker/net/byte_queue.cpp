#include "worker/net/byte_queue.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace scalws::worker {
namespace {

constexpr int kMaxIov = 64;
// A queue that never empties gives its blocks back one by one; the bookkeeping of the
// given-back ones is dropped once this many piled up.
constexpr size_t kCompactBlocks = 64;

}  // namespace

char* ByteQueue::reserveBlock(size_t n) {
  Block b;
  if (n <= BufferPool::kBlockSize) {
    b.data = pool_.take().release();
    b.size = BufferPool::kBlockSize;
  } else {
    b.data = new char[n];
    b.size = n;
  }
  blocks_.push_back(b);
  return b.data;
}

void ByteQueue::addOwnedSegment(const char* at, size_t n) {
  Segment s{Kind::kOwned};
  s.data = at;
  s.length = n;
  s.block = blocks_.size() - 1;
  segments_.push_back(s);
}

void ByteQueue::appendAcrossBlocks(std::string_view data) {
  while (!data.empty()) {
    size_t room = blocks_.empty() ? 0 : blocks_.back().size - blocks_.back().used;
    size_t n = std::min(data.size(), room > 0 ? room : BufferPool::kBlockSize);
    std::memcpy(reserve(n), data.data(), n);
    commit(n);
    data.remove_prefix(n);
  }
}

void ByteQueue::appendStable(std::string_view data, RefCounted* owner) {
  if (data.empty()) return;
  Segment s{Kind::kStable};
  s.data = data.data();
  s.length = data.size();
  s.owner = owner;
  if (owner != nullptr) {
    owner->retain();
    ++file_owners_;
  }
  segments_.push_back(s);
  pending_ += data.size();
}

void ByteQueue::appendFile(const FileSlice& file) {
  if (file.length == 0) return;
  Segment s{Kind::kFile};
  s.offset = file.offset;
  s.length = file.length;
  s.fd = file.fd;
  s.owner = file.owner;
  if (s.owner != nullptr) {
    s.owner->retain();
    ++file_owners_;
  }
  segments_.push_back(s);
  pending_ += file.length;
}

void ByteQueue::releaseBlock(Block& b) {
  if (b.data == nullptr) return;
  if (b.size == BufferPool::kBlockSize) {
    pool_.give(std::unique_ptr<char[]>(b.data));
  } else {
    delete[] b.data;
  }
  b.data = nullptr;
}

void ByteQueue::releaseBlocksBefore(size_t index) {
  for (; first_block_ < index; ++first_block_) releaseBlock(blocks_[first_block_]);
}

void ByteQueue::consume(uint64_t n) {
  if (n >= pending_) {
    clear();  // everything left: the common case of a flush that wrote it all
    return;
  }
  ++changes_;
  pending_ -= n;
  while (n > 0 && head_ < segments_.size()) {
    Segment& s = segments_[head_];
    uint64_t take = std::min<uint64_t>(n, s.length);
    s.length -= take;
    n -= take;
    if (s.kind == Kind::kFile) {
      s.offset += take;
    } else {
      s.data += take;
    }
    if (s.length > 0) break;
    if (s.kind != Kind::kOwned && s.owner != nullptr) {
      s.owner->release();
      --file_owners_;
    }
    if (s.kind == Kind::kOwned && s.block + 1 < blocks_.size()) {
      // Owned bytes are consumed in the order they were written: every block before this
      // segment's is spent, and so is its own when the segment ended it (only the tail
      // block is written to). The tail itself goes once the queue is empty.
      const Block& b = blocks_[s.block];
      releaseBlocksBefore(s.data == b.data + b.used ? s.block + 1 : s.block);
    }
    ++head_;
  }
  if (head_ == segments_.size()) {
    reset();
  } else if (first_block_ >= kCompactBlocks) {
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(first_block_));
    for (size_t i = head_; i < segments_.size(); ++i) {
      if (segments_[i].kind == Kind::kOwned) segments_[i].block -= first_block_;
    }
    first_block_ = 0;
  }
}

void ByteQueue::reset() {
  segments_.clear();
  head_ = 0;
  if (blocks_.empty()) return;
  if (blocks_.size() == 1) {
    releaseBlock(blocks_[0]);  // the usual case: one response, one block
  } else {
    for (size_t i = first_block_; i < blocks_.size(); ++i) releaseBlock(blocks_[i]);
  }
  blocks_.clear();
  first_block_ = 0;
}

bool ByteQueue::truncate(const Mark& m) {
  if (m.changes != changes_ || m.segments > segments_.size() || m.blocks > blocks_.size()) {
    return false;
  }
  for (size_t i = m.segments; i < segments_.size(); ++i) {
    if (segments_[i].kind != Kind::kOwned && segments_[i].owner != nullptr) {
      segments_[i].owner->release();
      --file_owners_;
    }
  }
  segments_.resize(m.segments);
  while (blocks_.size() > m.blocks) {
    releaseBlock(blocks_.back());
    blocks_.pop_back();
  }
  if (!blocks_.empty()) blocks_.back().used = m.tail_used;
  pending_ = m.pending;
  // An owned segment that grew past the mark (commit() merges into the last one) is cut
  // back to the mark's bytes.
  if (!segments_.empty() && segments_.back().kind == Kind::kOwned) {
    Segment& last = segments_.back();
    const Block& b = blocks_[last.block];
    const char* end = b.data + b.used;
    if (last.block + 1 == blocks_.size() && last.data + last.length > end) {
      last.length = static_cast<uint64_t>(end - last.data);
    }
  }
  if (empty()) reset();
  return true;
}

ByteQueue::FlushResult ByteQueue::flush(Transport& transport) {
  // Even a write that returns EAGAIN may have taken the bytes (TLS encrypts them before the
  // socket accepts them): after a flush no mark may cut them back.
  ++changes_;
  while (head_ < segments_.size()) {
    const Segment& first = segments_[head_];
    ssize_t n;
    if (first.kind == Kind::kFile) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(first.length, 1u << 30));
      n = transport.sendFile(first.fd, first.offset, chunk);
    } else {
      iovec iov[kMaxIov];
      int count = 0;
      bool file_follows = false;
      for (size_t i = head_; i < segments_.size() && count < kMaxIov; ++i) {
        const Segment& s = segments_[i];
        if (s.kind == Kind::kFile) {
          file_follows = true;
          break;
        }
        iov[count].iov_base = const_cast<char*>(s.data);
        iov[count].iov_len = s.length;
        ++count;
      }
      n = file_follows ? transport.writevMore(iov, count) : transport.writev(iov, count);
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

void ByteQueue::clear() {
  ++changes_;
  for (size_t i = head_; file_owners_ > 0 && i < segments_.size(); ++i) {
    if (segments_[i].kind != Kind::kOwned && segments_[i].owner != nullptr) {
      segments_[i].owner->release();
      --file_owners_;
    }
  }
  pending_ = 0;
  reset();
}

size_t ByteQueue::blocksForTest() const {
  size_t n = 0;
  for (const Block& b : blocks_) n += b.data != nullptr ? 1 : 0;
  return n;
}

}  // namespace scalws::worker
