#include "worker/loop/loop_local.h"

#include <gtest/gtest.h>

namespace scalws::worker {
namespace {

struct LocalsOwner {
  int made = 0;
  int stopped = 0;
};

struct First final : LoopLocal {
  explicit First(LocalsOwner& owner) : owner_(owner) { ++owner_.made; }
  void onLoopStopping() noexcept override { ++owner_.stopped; }
  LocalsOwner& owner_;
  int value = 0;
};

struct Second final : LoopLocal {
  explicit Second(LocalsOwner& owner) { ++owner.made; }
};

TEST(LoopLocals, MakesEachKindOnceOnFirstUse) {
  LocalsOwner owner;
  LoopLocals locals;
  EXPECT_EQ(locals.find<First>(), nullptr);
  First& a = locals.get<First>(owner);
  a.value = 7;
  EXPECT_EQ(locals.get<First>(owner).value, 7);
  EXPECT_EQ(locals.find<First>(), &a);
  EXPECT_EQ(owner.made, 1);
  EXPECT_EQ(locals.find<Second>(), nullptr);
  locals.get<Second>(owner);
  EXPECT_EQ(owner.made, 2);
}

TEST(LoopLocals, EachLoopHasItsOwn) {
  LocalsOwner owner;
  LoopLocals one;
  LoopLocals two;
  one.get<First>(owner).value = 1;
  two.get<First>(owner).value = 2;
  EXPECT_EQ(one.get<First>(owner).value, 1);
  EXPECT_EQ(two.get<First>(owner).value, 2);
}

TEST(LoopLocals, StoppingReachesEveryKindMade) {
  LocalsOwner owner;
  LoopLocals locals;
  locals.loopStopping();  // nothing made yet: nothing to tell
  EXPECT_EQ(owner.stopped, 0);
  locals.get<Second>(owner);
  locals.get<First>(owner);
  locals.loopStopping();
  EXPECT_EQ(owner.stopped, 1);
}

}  // namespace
}  // namespace scalws::worker
