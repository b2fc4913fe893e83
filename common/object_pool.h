// Objects made on first need and reused after: a loop's exchanges, tunnels and streams,
// so steady traffic allocates none per request. take() hands out a free object, or makes
// one from `args` when none is free; give() returns it (its owner has reset it, or resets
// it when it takes it again). Objects live as long as the pool; not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace scalws::common {

template <class T>
class ObjectPool {
 public:
  template <class... Args>
  T& take(Args&... args) {
    if (free_.empty()) {
      made_.push_back(std::make_unique<T>(args...));
      return *made_.back();
    }
    T* x = free_.back();
    free_.pop_back();
    return *x;
  }

  void give(T& x) { free_.push_back(&x); }

  // Every object made so far, handed out or free.
  size_t made() const { return made_.size(); }
  template <class F>
  void forEachMade(F&& f) {
    for (auto& x : made_) f(*x);
  }

 private:
  std::vector<std::unique_ptr<T>> made_;
  std::vector<T*> free_;
};

}  // namespace scalws::common
