// deferCall: runs a function on the next turn of a libuv loop, outside the caller's stack.
// Used where an object would otherwise be destroyed from inside one of its own callbacks.
#pragma once

#include <uv.h>

#include <functional>

namespace scalws::controller {

void deferCall(uv_loop_t* loop, std::function<void()> fn);

}  // namespace scalws::controller
