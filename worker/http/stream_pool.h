// The stream objects of one HTTP/2 or HTTP/3 session: made on first need, then reused, so
// a long connection allocates no stream per request. A stream is active from take() until
// its codec closes it (retire()), then waits in the closed list until collect() recycles
// it, which the session calls where no method of that stream can be on the stack.
//
// The stream type holds StreamList's links, has `void recycle()` (ready for the next
// request) and befriends this pool and StreamList.
#pragma once

#include <cstddef>

#include "common/object_pool.h"
#include "worker/http/stream_list.h"

namespace scalws::worker {

template <class StreamT>
class StreamPool {
 public:
  // A recycled stream, or a new one made from `args`, now active.
  template <class... Args>
  StreamT* take(Args&... args) {
    StreamT* s = &objects_.take(args...);
    active_.pushFront(s);
    return s;
  }

  // The codec closed `s`: it waits for collect().
  void retire(StreamT* s) {
    active_.remove(s);
    closed_.pushFront(s);
  }

  // Recycles the streams retired since the last call.
  void collect() {
    while (StreamT* s = closed_.popFront()) {
      s->recycle();
      objects_.give(*s);
    }
  }

  // Before the session's codec goes: every stream gives back what it holds of the codec's.
  void recycleAll() {
    objects_.forEachMade([](StreamT& s) { s.recycle(); });
  }

  const StreamList<StreamT>& active() const { return active_; }
  // Every stream object made so far, active, closed or free.
  size_t made() const { return objects_.made(); }

 private:
  common::ObjectPool<StreamT> objects_;
  StreamList<StreamT> active_;
  StreamList<StreamT> closed_;
};

}  // namespace scalws::worker
