// The one way to let go of a libuv handle that was allocated with `new`: libuv may still
// touch a handle until its close callback ran, so it is deleted there, never right after
// uv_close(). Used by the controller and the worker alike (both run libuv loops).
#pragma once

#include <uv.h>

namespace scalws::ipc {

// Closes `handle` (a uv_timer_t*, uv_poll_t*, uv_async_t*, ...) and deletes it once libuv
// is done with it; sets the caller's pointer to null. A null handle is left alone.
template <class Handle>
void closeAndDelete(Handle*& handle) noexcept {
  if (handle == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(handle),
           [](uv_handle_t* h) { delete reinterpret_cast<Handle*>(h); });
  handle = nullptr;
}

}  // namespace scalws::ipc
