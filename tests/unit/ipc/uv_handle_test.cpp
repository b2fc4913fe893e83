#include "ipc/uv_handle.h"

#include <gtest/gtest.h>

namespace scalws::ipc {
namespace {

TEST(UvHandleTest, ClosesDeletesAndForgets) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  auto* timer = new uv_timer_t;
  uv_timer_init(&loop, timer);
  uv_timer_start(
      timer, [](uv_timer_t*) { FAIL() << "a closed timer fired"; }, 0, 0);
  auto* async = new uv_async_t;
  uv_async_init(&loop, async, nullptr);
  closeAndDelete(timer);
  closeAndDelete(async);
  EXPECT_EQ(timer, nullptr);
  EXPECT_EQ(async, nullptr);
  closeAndDelete(timer);  // a null handle is left alone
  // The handles are freed by their close callbacks (ASan's leak check would see them).
  EXPECT_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace scalws::ipc
