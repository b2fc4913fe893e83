// A counter written by one thread (its loop) and read by others (the status page, the
// metrics sender). The write is a relaxed load + store — a plain add on x86, no locked
// instruction on the request path — yet reading it from another thread is well defined.
#pragma once

#include <atomic>
#include <cstdint>

namespace scalws::common::metrics {

class RelaxedCounter {
 public:
  // Only the owning thread adds.
#ifndef SCALWS_METRICS_OFF
  void add(uint64_t n = 1) noexcept {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void sub(uint64_t n = 1) noexcept {
    v_.store(v_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
  }
  void set(uint64_t n) noexcept {
    v_.store(n, std::memory_order_relaxed);
  }
#else  // the cost-of-metrics build (CMake SCALWS_METRICS=OFF)
  void add(uint64_t = 1) noexcept {}
  void sub(uint64_t = 1) noexcept {}
  void set(uint64_t) noexcept {}
#endif
  uint64_t value() const noexcept {
    return v_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> v_{0};
};

static_assert(std::atomic<uint64_t>::is_always_lock_free);

}  // namespace scalws::common::metrics
