// The supervisor's restart decisions, driven by a fake clock (times are plain arguments).
#include "controller/restart_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace scalws::controller {
namespace {

// A worker that dies right after each restart: the delays it gets, one per crash.
std::vector<uint64_t> delaysForFastCrashes(RestartPolicy& policy, int crashes, uint64_t& now) {
  std::vector<uint64_t> out;
  for (int i = 0; i < crashes; ++i) {
    RestartPolicy::Decision d = policy.onCrash(0, now, 50);
    out.push_back(d.delay_ms);
    now += d.delay_ms + 50;
  }
  return out;
}

TEST(RestartPolicyTest, BackoffDoublesFrom100MsAndStopsAt30s) {
  RestartLimits limits;
  limits.crash_limit = 1000;  // only the backoff here
  RestartPolicy policy(limits);
  uint64_t now = 1'000'000;
  std::vector<uint64_t> delays = delaysForFastCrashes(policy, 12, now);
  EXPECT_EQ(delays, (std::vector<uint64_t>{100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600,
                                           30000, 30000, 30000}));
}

TEST(RestartPolicyTest, AWorkerThatRanLongEnoughStartsAFreshSequence) {
  RestartLimits limits;
  limits.crash_limit = 1000;
  RestartPolicy policy(limits);
  EXPECT_EQ(policy.onCrash(0, 1000, 10).delay_ms, 100u);
  EXPECT_EQ(policy.onCrash(0, 2000, 10).delay_ms, 200u);
  EXPECT_EQ(policy.onCrash(0, 3000, 10).delay_ms, 400u);
  // Up for stable_after (10 s): its crash counts as a first one again.
  EXPECT_EQ(policy.onCrash(0, 20'000, 10'000).delay_ms, 100u);
  EXPECT_EQ(policy.onCrash(0, 21'000, 9'999).delay_ms, 200u);
}

TEST(RestartPolicyTest, SlotsBackOffIndependently) {
  RestartLimits limits;
  limits.crash_limit = 1000;
  RestartPolicy policy(limits);
  EXPECT_EQ(policy.onCrash(0, 1000, 10).delay_ms, 100u);
  EXPECT_EQ(policy.onCrash(0, 1100, 10).delay_ms, 200u);
  EXPECT_EQ(policy.onCrash(1, 1200, 10).delay_ms, 100u);
}

TEST(RestartPolicyTest, TheCrashLimitWithinTheWindowGivesUp) {
  RestartLimits limits;
  limits.crash_limit = 3;
  limits.crash_window_ms = 60'000;
  RestartPolicy policy(limits);
  RestartPolicy::Decision a = policy.onCrash(0, 1000, 10);
  RestartPolicy::Decision b = policy.onCrash(1, 2000, 10);
  EXPECT_FALSE(a.give_up);
  EXPECT_FALSE(b.give_up);
  EXPECT_EQ(b.crashes_in_window, 2u);
  RestartPolicy::Decision c = policy.onCrash(0, 3000, 10);  // any slot counts
  EXPECT_TRUE(c.give_up);
  EXPECT_EQ(c.crashes_in_window, 3u);
}

TEST(RestartPolicyTest, CrashesOlderThanTheWindowAreForgotten) {
  RestartLimits limits;
  limits.crash_limit = 3;
  limits.crash_window_ms = 60'000;
  RestartPolicy policy(limits);
  EXPECT_FALSE(policy.onCrash(0, 1000, 10).give_up);
  EXPECT_FALSE(policy.onCrash(0, 2000, 10).give_up);
  // 60.5 s after the first: it left the window, two remain with this one.
  RestartPolicy::Decision d = policy.onCrash(0, 61'500, 10);
  EXPECT_FALSE(d.give_up);
  EXPECT_EQ(d.crashes_in_window, 2u);
  EXPECT_TRUE(policy.onCrash(0, 61'800, 10).give_up);
}

TEST(RestartPolicyTest, ResetForgetsEverything) {
  RestartLimits limits;
  limits.crash_limit = 2;
  RestartPolicy policy(limits);
  EXPECT_FALSE(policy.onCrash(0, 1000, 10).give_up);
  policy.reset();
  RestartPolicy::Decision d = policy.onCrash(0, 1100, 10);
  EXPECT_FALSE(d.give_up);
  EXPECT_EQ(d.delay_ms, 100u);
  EXPECT_EQ(d.crashes_in_window, 1u);
}

}  // namespace
}  // namespace scalws::controller
