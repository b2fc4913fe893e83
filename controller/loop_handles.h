// The libuv handles a controller object owns: a timer (LoopTimer) and a readiness watch on
// a descriptor (FdWatch). Each is a plain member of its owner: destroying it (or close())
// stops it at once, its callback never fires afterwards, and libuv's close callback frees
// the handle on a later loop turn, so the owner may go away from inside that callback.
// Single-threaded: the loop's thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>

namespace scalws::controller {

class LoopTimer {
 public:
  explicit LoopTimer(uv_loop_t* loop) : loop_(loop) {}
  ~LoopTimer() { close(); }
  LoopTimer(const LoopTimer&) = delete;
  LoopTimer& operator=(const LoopTimer&) = delete;

  // (Re)arms: `fire` after `ms`, then every `repeat` ms when repeat > 0. A callback may
  // re-arm or close its own timer.
  void start(uint64_t ms, uint64_t repeat, std::function<void()> fire);
  void stop();
  void close();
  bool active() const;

 private:
  struct Handle;
  uv_loop_t* loop_;
  Handle* handle_ = nullptr;
};

class FdWatch {
 public:
  explicit FdWatch(uv_loop_t* loop) : loop_(loop) {}
  ~FdWatch() { close(); }
  FdWatch(const FdWatch&) = delete;
  FdWatch& operator=(const FdWatch&) = delete;

  // Calls `on_readable` whenever `fd` is readable (or in error) until close(). The fd stays
  // the caller's and must outlive the watch. Errors are libuv's (e.g. a file, not a socket).
  int start(int fd, std::function<void()> on_readable);
  void close();
  bool active() const { return handle_ != nullptr; }

 private:
  struct Handle;
  uv_loop_t* loop_;
  Handle* handle_ = nullptr;
};

}  // namespace scalws::controller
