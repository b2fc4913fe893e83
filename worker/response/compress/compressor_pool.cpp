#include "worker/response/compress/compressor_pool.h"

namespace scalws::worker::compress {

std::unique_ptr<Compressor> CompressorPool::take(const Compressor::Params& params) {
  // Newest first: the most recently used one is the likeliest to be in the CPU's caches.
  for (size_t i = idle_.size(); i-- > 0;) {
    if (!(idle_[i]->params() == params)) continue;
    std::unique_ptr<Compressor> found = std::move(idle_[i]);
    idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
    return found;
  }
  return Compressor::create(params);
}

void CompressorPool::give(std::unique_ptr<Compressor> compressor) {
  if (!compressor || !compressor->reset()) return;
  if (idle_.size() == kMaxIdle) idle_.erase(idle_.begin());
  idle_.push_back(std::move(compressor));
}

}  // namespace scalws::worker::compress
