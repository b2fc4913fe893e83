#include "worker/server/cpu_binding.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>
#include <vector>

namespace scalws::worker {
namespace {

std::vector<uint32_t> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<uint32_t> cpus;
  for (uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

TEST(CpuBindingTest, MultiModeWorkersTakeTheListRoundRobin) {
  const std::vector<uint32_t> cpus = {3, 5, 7};
  EXPECT_EQ(cpusForMultiWorker(cpus, 0), std::vector<uint32_t>{3});
  EXPECT_EQ(cpusForMultiWorker(cpus, 2), std::vector<uint32_t>{7});
  EXPECT_EQ(cpusForMultiWorker(cpus, 4), std::vector<uint32_t>{5});
  EXPECT_TRUE(cpusForMultiWorker({}, 1).empty());
}

// Each case runs on a thread of its own: binding changes the calling thread only.
TEST(CpuBindingTest, BindsTheCallingThreadAndTheThreadsItStarts) {
  const std::vector<uint32_t> before = allowedCpus();
  ASSERT_FALSE(before.empty());
  const uint32_t last = before.back();
  std::vector<uint32_t> seen_by_bound, seen_by_child;
  std::thread([&] {
    ASSERT_TRUE(bindCallingThread({&last, 1}).ok());
    seen_by_bound = allowedCpus();
    std::thread([&] { seen_by_child = allowedCpus(); }).join();
  }).join();
  EXPECT_EQ(seen_by_bound, std::vector<uint32_t>{last});
  EXPECT_EQ(seen_by_child, std::vector<uint32_t>{last});
  EXPECT_EQ(allowedCpus(), before);  // the test's own thread kept its set
}

TEST(CpuBindingTest, AnEmptyListChangesNothing) {
  const std::vector<uint32_t> before = allowedCpus();
  std::vector<uint32_t> after;
  std::thread([&] {
    EXPECT_TRUE(bindCallingThread({}).ok());
    after = allowedCpus();
  }).join();
  EXPECT_EQ(after, before);
}

TEST(CpuBindingTest, ACpuTheKernelRefusesIsAnErrorThatNamesIt) {
  const uint32_t missing = CPU_SETSIZE - 1;  // no test machine has 1024 CPUs
  std::thread([&] {
    common::Status bound = bindCallingThread({&missing, 1});
    ASSERT_FALSE(bound.ok());
    EXPECT_NE(bound.message().find("1023"), std::string::npos) << bound.message();
  }).join();
  const uint32_t past = CPU_SETSIZE;
  std::thread([&] { EXPECT_FALSE(bindCallingThread({&past, 1}).ok()); }).join();
}

}  // namespace
}  // namespace scalws::worker
