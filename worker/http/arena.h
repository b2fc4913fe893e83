// A bump allocator for what a request must keep beyond its views (a lower-cased host, a
// decoded path). Reset when the request ends; its first block is reused, so a connection
// in steady state allocates nothing per request.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace scalws::worker {

class Arena {
 public:
  explicit Arena(size_t first_block = 2048) : first_size_(first_block) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  char* allocate(size_t n);
  std::string_view copy(std::string_view s);
  // A T living as long as the arena's contents; never destroyed, hence trivial ones only.
  template <class T, class... Args>
  T* make(Args&&... args) {
    static_assert(std::is_trivially_destructible_v<T> && alignof(T) <= 8);
    return new (allocate(sizeof(T))) T(std::forward<Args>(args)...);
  }
  void reset();

 private:
  struct Block {
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };
  size_t first_size_;
  std::vector<Block> blocks_;
  size_t used_ = 0;  // in the last block
};

}  // namespace scalws::worker
