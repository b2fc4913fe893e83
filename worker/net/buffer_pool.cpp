#include "worker/net/buffer_pool.h"

namespace scalws::worker {

std::unique_ptr<char[]> BufferPool::take() {
  if (free_.empty()) return std::unique_ptr<char[]>(new char[kBlockSize]);
  std::unique_ptr<char[]> block = std::move(free_.back());
  free_.pop_back();
  return block;
}

void BufferPool::give(std::unique_ptr<char[]> block) {
  if (block && free_.size() < max_free_) free_.push_back(std::move(block));
}

}  // namespace scalws::worker
