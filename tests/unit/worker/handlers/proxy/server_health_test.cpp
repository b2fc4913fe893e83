// A server's health: passive failures within the window, trials, and active probes.
#include "worker/handlers/proxy/server_health.h"

#include <gtest/gtest.h>

namespace scalws::worker::proxy {
namespace {

TEST(ServerHealth, PassiveFailuresWithinTheWindowMarkItDown) {
  HealthPolicy p{3, 10'000, false, 3, 2};
  ServerHealth h;
  EXPECT_FALSE(h.onFailure(p, 1'000));
  EXPECT_FALSE(h.onFailure(p, 2'000));
  EXPECT_TRUE(h.available(p, 2'000));
  EXPECT_TRUE(h.onFailure(p, 3'000));
  EXPECT_EQ(h.state(), ServerHealth::State::kDown);
  EXPECT_EQ(h.downSinceMs(), 3'000u);
  EXPECT_FALSE(h.available(p, 12'999));
}

TEST(ServerHealth, FailuresSpreadOverMoreThanTheWindowDoNot) {
  HealthPolicy p{2, 1'000, false, 3, 2};
  ServerHealth h;
  EXPECT_FALSE(h.onFailure(p, 1'000));
  EXPECT_FALSE(h.onFailure(p, 2'500));  // a new window
  EXPECT_EQ(h.state(), ServerHealth::State::kUp);
  // A success clears the count.
  EXPECT_FALSE(h.onSuccess(p));
  EXPECT_FALSE(h.onFailure(p, 2'600));
  EXPECT_EQ(h.state(), ServerHealth::State::kUp);
}

TEST(ServerHealth, ADownServerGetsOneTrialPerTimeout) {
  HealthPolicy p{1, 1'000, false, 3, 2};
  ServerHealth h;
  EXPECT_TRUE(h.onFailure(p, 0));
  EXPECT_FALSE(h.available(p, 999));
  EXPECT_TRUE(h.available(p, 1'000));
  h.onChosen(p, 1'000);  // the trial
  EXPECT_FALSE(h.available(p, 1'001));
  EXPECT_FALSE(h.onFailure(p, 1'100));  // failed: wait again
  EXPECT_FALSE(h.available(p, 2'000));
  EXPECT_TRUE(h.available(p, 2'100));
  h.onChosen(p, 2'100);
  EXPECT_TRUE(h.onSuccess(p));  // back
  EXPECT_EQ(h.state(), ServerHealth::State::kUp);
}

TEST(ServerHealth, MaxFailsZeroTurnsPassiveChecksOff) {
  HealthPolicy p{0, 1'000, false, 3, 2};
  ServerHealth h;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(h.onFailure(p, static_cast<uint64_t>(i)));
  EXPECT_EQ(h.state(), ServerHealth::State::kUp);
}

TEST(ServerHealth, WithActiveChecksOnlyProbesBringItBack) {
  HealthPolicy p{1, 1'000, true, 2, 2};
  ServerHealth h;
  EXPECT_TRUE(h.onFailure(p, 0));
  EXPECT_FALSE(h.available(p, 5'000));  // no trials: probes decide
  EXPECT_FALSE(h.onSuccess(p));
  EXPECT_FALSE(h.onProbe(p, true, 5'000));
  EXPECT_TRUE(h.onProbe(p, true, 6'000));
  EXPECT_TRUE(h.available(p, 6'000));
  EXPECT_FALSE(h.onProbe(p, false, 7'000));
  EXPECT_FALSE(h.onProbe(p, true, 8'000));  // a pass resets the failed run
  EXPECT_FALSE(h.onProbe(p, false, 9'000));
  EXPECT_TRUE(h.onProbe(p, false, 10'000));
  EXPECT_EQ(h.state(), ServerHealth::State::kDown);
  EXPECT_EQ(h.downSinceMs(), 10'000u);
}

}  // namespace
}  // namespace scalws::worker::proxy
