#include "worker/tls/cipher_queue.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace scalws::worker::tls {
namespace {
constexpr size_t kBlock = BufferPool::kBlockSize;
constexpr int kMaxIov = 16;
}  // namespace

CipherQueue::~CipherQueue() {
  for (auto& b : blocks_) pool_.give(std::move(b));
}

void CipherQueue::append(const char* data, size_t len) {
  size_ += len;
  while (len > 0) {
    if (blocks_.empty() || tail_ == kBlock) {
      blocks_.push_back(pool_.take());
      tail_ = 0;
    }
    size_t n = std::min(len, kBlock - tail_);
    std::memcpy(blocks_.back().get() + tail_, data, n);
    tail_ += n;
    data += n;
    len -= n;
  }
}

void CipherQueue::dropFront(size_t n) {
  size_ -= n;
  while (n > 0) {
    size_t in_first = (blocks_.size() == 1 ? tail_ : kBlock) - head_;
    if (n < in_first) {
      head_ += n;
      return;
    }
    n -= in_first;
    pool_.give(std::move(blocks_.front()));
    blocks_.erase(blocks_.begin());
    head_ = 0;
  }
  if (blocks_.empty()) tail_ = 0;
}

CipherQueue::Flush CipherQueue::flush(int fd) {
  while (size_ > 0) {
    iovec iov[kMaxIov];
    int count = 0;
    for (size_t i = 0; i < blocks_.size() && count < kMaxIov; ++i) {
      size_t begin = i == 0 ? head_ : 0;
      size_t end = i + 1 == blocks_.size() ? tail_ : kBlock;
      iov[count].iov_base = blocks_[i].get() + begin;
      iov[count].iov_len = end - begin;
      ++count;
    }
    ssize_t n;
    do {
      n = ::writev(fd, iov, count);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      return (errno == EAGAIN || errno == EWOULDBLOCK) ? Flush::kBlocked : Flush::kError;
    }
    dropFront(static_cast<size_t>(n));
    if (size_ > 0 && n == 0) return Flush::kBlocked;
  }
  // An empty queue keeps no block: an idle connection holds no memory here.
  if (size_ == 0 && !blocks_.empty()) {
    for (auto& b : blocks_) pool_.give(std::move(b));
    blocks_.clear();
    head_ = tail_ = 0;
  }
  return Flush::kDone;
}

}  // namespace scalws::worker::tls
