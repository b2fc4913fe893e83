#include "worker/loop/loop_local.h"

#include <atomic>

namespace scalws::worker {

size_t LoopLocals::nextIndex() {
  // Loops of one process run on several threads; the first use of a kind may race.
  static std::atomic<size_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace scalws::worker
