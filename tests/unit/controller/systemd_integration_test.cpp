// Which shutdown a signal means (the D-Bus question itself needs a running systemd).
#include "controller/systemd_integration.h"

#include <gtest/gtest.h>

#include <csignal>

namespace scalws::controller {
namespace {

TEST(ShutdownModeTest, RestartJobsLeaveTheInstancesServing) {
  for (const char* job : {"restart", "try-restart", "reload-or-restart", "reload-or-try-restart"}) {
    EXPECT_EQ(shutdownModeFor(SIGTERM, std::string(job)), ShutdownMode::kLeaveInstances) << job;
  }
}

TEST(ShutdownModeTest, StopJobsAndPlainSigtermStopThem) {
  EXPECT_EQ(shutdownModeFor(SIGTERM, std::string("stop")), ShutdownMode::kStopInstances);
  EXPECT_EQ(shutdownModeFor(SIGTERM, std::nullopt), ShutdownMode::kStopInstances);
  EXPECT_EQ(shutdownModeFor(SIGTERM, std::string("start")), ShutdownMode::kStopInstances);
}

TEST(ShutdownModeTest, SigintAlwaysStopsAndSigusr2AlwaysLeaves) {
  EXPECT_EQ(shutdownModeFor(SIGINT, std::string("restart")), ShutdownMode::kStopInstances);
  EXPECT_EQ(shutdownModeFor(SIGUSR2, std::nullopt), ShutdownMode::kLeaveInstances);
  EXPECT_EQ(shutdownModeFor(SIGUSR2, std::string("stop")), ShutdownMode::kLeaveInstances);
}

TEST(ShutdownModeTest, OutsideSystemdThereIsNoJob) {
  // The test runs outside a unit (or in one without NOTIFY_SOCKET/INVOCATION_ID handling a
  // job for it): no answer, so SIGTERM keeps its conservative meaning.
  if (getenv("INVOCATION_ID") != nullptr) GTEST_SKIP() << "running inside a systemd unit";
  EXPECT_EQ(systemdJobType(), std::nullopt);
}

}  // namespace
}  // namespace scalws::controller
