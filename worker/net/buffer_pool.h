// Fixed-size byte blocks recycled per loop, so connections hold memory only while they have
// bytes to keep: an idle keep-alive connection gives its buffers back (as nginx does).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace scalws::worker {

class BufferPool {
 public:
  static constexpr size_t kBlockSize = 16 * 1024;

  explicit BufferPool(size_t max_free = 256) : max_free_(max_free) {}
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  std::unique_ptr<char[]> take();
  void give(std::unique_ptr<char[]> block);
  size_t freeCountForTest() const { return free_.size(); }

 private:
  size_t max_free_;
  std::vector<std::unique_ptr<char[]>> free_;
};

}  // namespace scalws::worker
