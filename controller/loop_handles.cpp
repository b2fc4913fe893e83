#include "controller/loop_handles.h"

#include <utility>

namespace scalws::controller {

// The callback lives beside the handle, so a callback that closes its own timer (and
// with it drops the std::function it runs in) is safe: the Handle is freed only once libuv
// has closed it, on a later turn.
struct LoopTimer::Handle {
  uv_timer_t timer;
  std::function<void()> fire;
};

struct FdWatch::Handle {
  uv_poll_t poll;
  std::function<void()> on_readable;
};

namespace {

template <typename H, typename UvHandle>
void closeAndFree(H*& handle, UvHandle* uv) {
  if (handle == nullptr) return;
  uv->data = handle;
  uv_close(reinterpret_cast<uv_handle_t*>(uv),
           [](uv_handle_t* h) { delete static_cast<H*>(h->data); });
  handle = nullptr;
}

}  // namespace

void LoopTimer::start(uint64_t ms, uint64_t repeat, std::function<void()> fire) {
  if (handle_ == nullptr) {
    handle_ = new Handle;
    uv_timer_init(loop_, &handle_->timer);
    handle_->timer.data = handle_;
  }
  handle_->fire = std::move(fire);
  uv_timer_start(
      &handle_->timer,
      [](uv_timer_t* t) {
        auto* h = static_cast<Handle*>(t->data);
        // A copy: the callback may re-arm (replacing h->fire) or close the timer.
        std::function<void()> run = h->fire;
        if (run) run();
      },
      ms, repeat);
}

void LoopTimer::stop() {
  if (handle_ != nullptr) uv_timer_stop(&handle_->timer);
}

void LoopTimer::close() {
  if (handle_ == nullptr) return;
  uv_timer_stop(&handle_->timer);
  handle_->fire = nullptr;
  closeAndFree(handle_, &handle_->timer);
}

bool LoopTimer::active() const {
  return handle_ != nullptr && uv_is_active(reinterpret_cast<const uv_handle_t*>(&handle_->timer));
}

int FdWatch::start(int fd, std::function<void()> on_readable) {
  close();
  auto* h = new Handle;
  int rc = uv_poll_init(loop_, &h->poll, fd);
  if (rc != 0) {
    delete h;
    return rc;
  }
  h->poll.data = h;
  h->on_readable = std::move(on_readable);
  handle_ = h;
  uv_poll_start(&h->poll, UV_READABLE, [](uv_poll_t* p, int, int) {
    auto* self = static_cast<Handle*>(p->data);
    std::function<void()> fn = self->on_readable;
    if (fn) fn();
  });
  return 0;
}

void FdWatch::close() {
  if (handle_ == nullptr) return;
  uv_poll_stop(&handle_->poll);
  handle_->on_readable = nullptr;
  closeAndFree(handle_, &handle_->poll);
}

}  // namespace scalws::controller
