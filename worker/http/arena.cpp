#include "worker/http/arena.h"

#include <algorithm>
#include <cstring>

namespace scalws::worker {

char* Arena::allocate(size_t n) {
  n = (n + 7) & ~size_t{7};
  if (blocks_.empty() || blocks_.back().size - used_ < n) {
    size_t size = std::max(n, blocks_.empty() ? first_size_ : blocks_.back().size * 2);
    blocks_.push_back(Block{std::make_unique<char[]>(size), size});
    used_ = 0;
  }
  char* p = blocks_.back().data.get() + used_;
  used_ += n;
  return p;
}

std::string_view Arena::copy(std::string_view s) {
  if (s.empty()) return {};
  char* p = allocate(s.size());
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

void Arena::reset() {
  // Keep the first block only: a request that needed more was an outlier.
  if (blocks_.size() > 1) blocks_.resize(1);
  used_ = 0;
}

}  // namespace scalws::worker
