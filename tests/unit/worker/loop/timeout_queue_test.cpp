#include "worker/loop/timeout_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker {
namespace {

struct Entry : TimeoutEntry {
  Entry(std::vector<int>* fired_log, int entry_id) : log(fired_log), id(entry_id) {}
  void onTimeout() noexcept override { log->push_back(id); }
  std::vector<int>* log;
  int id;
};

TEST(TimeoutQueueTest, FiresInDeadlineOrderAcrossDurations) {
  std::vector<int> fired;
  Entry a(&fired, 1), b(&fired, 2), c(&fired, 3);
  TimeoutQueue q;
  q.arm(a, 1000, 0);  // deadline 1000
  q.arm(b, 100, 0);   // 100
  q.arm(c, 100, 50);  // 150
  EXPECT_EQ(q.nextDeadline(), 100u);
  q.expire(99);
  EXPECT_TRUE(fired.empty());
  q.expire(150);
  EXPECT_EQ(fired, (std::vector<int>{2, 3}));
  EXPECT_FALSE(b.armed());
  EXPECT_EQ(q.nextDeadline(), 1000u);
  q.expire(5000);
  EXPECT_EQ(fired, (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(q.nextDeadline(), UINT64_MAX);
}

TEST(TimeoutQueueTest, RearmMovesToTheBackAndDisarmRemoves) {
  std::vector<int> fired;
  Entry a(&fired, 1), b(&fired, 2);
  TimeoutQueue q;
  q.arm(a, 100, 0);
  q.arm(b, 100, 10);
  q.arm(a, 100, 20);  // a now after b
  q.expire(115);
  EXPECT_EQ(fired, (std::vector<int>{2}));
  q.disarm(a);
  q.expire(10000);
  EXPECT_EQ(fired, (std::vector<int>{2}));
}

TEST(TimeoutQueueTest, CallbackMayRearmItself) {
  struct Rearming : TimeoutEntry {
    TimeoutQueue* q;
    int count = 0;
    void onTimeout() noexcept override {
      if (++count < 3) q->arm(*this, 10, 0);  // deadline 10: expire loop must not spin
    }
  } e;
  TimeoutQueue q;
  e.q = &q;
  q.arm(e, 10, 0);
  q.expire(10);
  // Re-armed with a deadline <= now fires again in the same sweep until it stops.
  EXPECT_EQ(e.count, 3);
}

}  // namespace
}  // namespace scalws::worker
