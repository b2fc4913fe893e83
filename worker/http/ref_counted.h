// A non-atomic reference count for objects that live on one loop (open-file cache entries,
// pooled buffers). Loops share nothing on the request path, so no atomics are needed.
#pragma once

#include <cstdint>

namespace scalws::worker {

class RefCounted {
 public:
  void retain() noexcept { ++refs_; }
  void release() noexcept {
    if (--refs_ == 0) onLastRelease();
  }
  uint32_t refCountForTest() const { return refs_; }

 protected:
  RefCounted() = default;
  ~RefCounted() = default;
  virtual void onLastRelease() noexcept = 0;

 private:
  uint32_t refs_ = 1;
};

}  // namespace scalws::worker
