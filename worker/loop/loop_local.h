// Per-loop state that belongs to a handler rather than to the loop: the FastCGI pools of a
// loop, its upstream connections, ... The loop holds one of each kind, made on first use and
// destroyed with the loop, without knowing what the kinds are, so adding a handler touches
// no loop code.
//
// A kind derives from LoopLocal and is constructible from `WorkerLoop&`; a handler gets it
// with `request.loop->local<fastcgi::LoopPools>()`. Loop thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace scalws::worker {

class LoopLocal {
 public:
  virtual ~LoopLocal() = default;
  // The loop's last connection is gone and it is about to end: close kept connections and
  // other handles so uv_run can return. Called once.
  virtual void onLoopStopping() noexcept {}
};

// The slots of one loop. Each kind gets a small dense index the first time it is named
// anywhere in the process, so a lookup is a vector index, not a map search.
class LoopLocals {
 public:
  template <class T, class Owner>
  T& get(Owner& owner) {
    const size_t index = indexOf<T>();
    if (index >= slots_.size()) slots_.resize(index + 1);
    std::unique_ptr<LoopLocal>& slot = slots_[index];
    if (!slot) slot = std::make_unique<T>(owner);
    return static_cast<T&>(*slot);
  }
  template <class T>
  T* find() const {
    const size_t index = indexOf<T>();
    return index < slots_.size() ? static_cast<T*>(slots_[index].get()) : nullptr;
  }
  void loopStopping() noexcept {
    for (auto& slot : slots_) {
      if (slot) slot->onLoopStopping();
    }
  }

 private:
  // One per kind in the whole process, given during static initialisation, so a lookup
  // reads a plain variable (a function-local static would test its guard every time).
  static size_t nextIndex();
  template <class T>
  static inline const size_t kIndexOf = LoopLocals::nextIndex();
  template <class T>
  static size_t indexOf() {
    return kIndexOf<T>;
  }
  std::vector<std::unique_ptr<LoopLocal>> slots_;
};

}  // namespace scalws::worker
