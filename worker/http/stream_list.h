// A session's streams in one of its lists (active, or closed and waiting to be recycled):
// an intrusive doubly linked list, so a stream moves between lists in O(1) and without
// allocating. The stream type holds the links (`T* prev_`, `T* next_`) and befriends the
// list.
#pragma once

#include <cstddef>

namespace scalws::worker {

template <class T>
class StreamList {
 public:
  T* front() const { return head_; }
  bool empty() const { return head_ == nullptr; }
  size_t size() const { return size_; }
  static T* next(const T* s) { return s->next_; }

  void pushFront(T* s) {
    s->prev_ = nullptr;
    s->next_ = head_;
    if (head_ != nullptr) head_->prev_ = s;
    head_ = s;
    ++size_;
  }

  void remove(T* s) {
    if (s->prev_ != nullptr) {
      s->prev_->next_ = s->next_;
    } else {
      head_ = s->next_;
    }
    if (s->next_ != nullptr) s->next_->prev_ = s->prev_;
    s->prev_ = s->next_ = nullptr;
    --size_;
  }

  T* popFront() {
    T* s = head_;
    if (s != nullptr) remove(s);
    return s;
  }

 private:
  T* head_ = nullptr;
  size_t size_ = 0;
};

}  // namespace scalws::worker
