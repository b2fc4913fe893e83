#include "controller/deferred_call.h"

#include "ipc/uv_handle.h"

namespace scalws::controller {

void deferCall(uv_loop_t* loop, std::function<void()> fn) {
  auto* timer = new uv_timer_t;
  uv_timer_init(loop, timer);
  timer->data = new std::function<void()>(std::move(fn));
  uv_timer_start(
      timer,
      [](uv_timer_t* t) {
        auto* f = static_cast<std::function<void()>*>(t->data);
        t->data = nullptr;
        (*f)();
        delete f;
        ipc::closeAndDelete(t);
      },
      0, 0);
}

}  // namespace scalws::controller
