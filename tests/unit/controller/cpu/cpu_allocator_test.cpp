#include "controller/cpu/cpu_allocator.h"

#include <gtest/gtest.h>

namespace scalws::controller::cpu {
namespace {

using common::CpuSet;
using common::StatusCode;

CpuSet allocateOk(const CpuAllocator& allocator, uint32_t count, bool shared,
                  const std::vector<CpuAssignment>& existing) {
  common::Result<CpuSet> set = allocator.allocate(count, shared, existing);
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? *set : CpuSet();
}

// Adds `instance` holding `cpus` to `existing`, as the store would after allocating.
void hold(std::vector<CpuAssignment>& existing, const std::string& instance, const CpuSet& cpus,
          bool shared) {
  for (uint32_t cpu : cpus.ids()) existing.push_back({instance, cpu, shared});
}

TEST(CpuAllocatorTest, ExclusiveTakesTheLowestFreeCpus) {
  CpuAllocator allocator(CpuSet::range(0, 7));
  std::vector<CpuAssignment> existing;
  EXPECT_EQ(allocateOk(allocator, 2, false, existing), CpuSet({0, 1}));
  hold(existing, "a", CpuSet({0, 1}), false);
  hold(existing, "s", CpuSet({2}), true);
  // 2 is held by a shared instance: an exclusive CPU is held by nobody else at all.
  EXPECT_EQ(allocateOk(allocator, 3, false, existing), CpuSet({3, 4, 5}));
}

TEST(CpuAllocatorTest, ExclusiveExhaustionNamesWhatIsFree) {
  CpuAllocator allocator(CpuSet::range(0, 3));
  std::vector<CpuAssignment> existing;
  hold(existing, "web", CpuSet({0}), false);
  hold(existing, "blog", CpuSet({1}), true);
  hold(existing, "shop", CpuSet({1}), true);
  common::Result<CpuSet> set = allocator.allocate(3, false, existing);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kResourceExhausted);
  const std::string& m = set.status().message();
  EXPECT_NE(m.find("3 exclusive CPU(s) wanted but only 2 free (2-3)"), std::string::npos) << m;
  EXPECT_NE(m.find("0 by web (exclusive)"), std::string::npos) << m;
  EXPECT_NE(m.find("1 by blog, shop (shared)"), std::string::npos) << m;
  // Exactly what is free still works.
  EXPECT_EQ(allocateOk(allocator, 2, false, existing), CpuSet({2, 3}));
}

TEST(CpuAllocatorTest, MoreThanTheHostIsRefusedEvenWhenEmpty) {
  CpuAllocator allocator(CpuSet({4, 5}));
  common::Result<CpuSet> set = allocator.allocate(3, false, {});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("only 2 free (4-5) of 2"), std::string::npos)
      << set.status().message();
  EXPECT_FALSE(allocator.allocate(3, true, {}).ok());
}

TEST(CpuAllocatorTest, ZeroCpusIsAUsageError) {
  CpuAllocator allocator(CpuSet::range(0, 3));
  EXPECT_EQ(allocator.allocate(0, false, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.allocate(0, true, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(CpuAllocatorTest, SharedTakesTheLeastLoadedAndFreeFirst) {
  CpuAllocator allocator(CpuSet::range(0, 3));
  std::vector<CpuAssignment> existing;
  hold(existing, "a", CpuSet({0, 1}), true);
  hold(existing, "b", CpuSet({0}), true);
  // Loads: 0 → 2, 1 → 1, 2 → 0, 3 → 0.
  EXPECT_EQ(allocateOk(allocator, 2, true, existing), CpuSet({2, 3}));
  EXPECT_EQ(allocateOk(allocator, 3, true, existing), CpuSet({1, 2, 3}));
  EXPECT_EQ(allocateOk(allocator, 4, true, existing), CpuSet({0, 1, 2, 3}));
}

TEST(CpuAllocatorTest, SharedSpreadsEvenlyWithTiesToTheLowestId) {
  CpuAllocator allocator(CpuSet::range(0, 3));
  std::vector<CpuAssignment> existing;
  for (int i = 0; i < 6; ++i) {
    CpuSet got = allocateOk(allocator, 1, true, existing);
    EXPECT_EQ(got, CpuSet({static_cast<uint32_t>(i % 4)})) << "round " << i;
    hold(existing, "i" + std::to_string(i), got, true);
  }
}

TEST(CpuAllocatorTest, SharedNeverUsesAnExclusiveCpu) {
  CpuAllocator allocator(CpuSet::range(0, 3));
  std::vector<CpuAssignment> existing;
  hold(existing, "solo", CpuSet({0, 1, 2}), false);
  hold(existing, "s1", CpuSet({3}), true);
  hold(existing, "s2", CpuSet({3}), true);
  // CPU 3 is loaded, 0-2 are idle but exclusive: only 3 is usable.
  EXPECT_EQ(allocateOk(allocator, 1, true, existing), CpuSet({3}));
  common::Result<CpuSet> two = allocator.allocate(2, true, existing);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(two.status().message().find("only 1 of 4 are not held exclusively (3)"),
            std::string::npos)
      << two.status().message();
}

TEST(CpuAllocatorTest, ReservedCpusAreNeverHandedOut) {
  // The host set already excludes --reserve-cpus (host_cpus.h): 0 and 2 are reserved.
  CpuAllocator allocator(CpuSet({1, 3}));
  EXPECT_EQ(allocateOk(allocator, 2, false, {}), CpuSet({1, 3}));
  EXPECT_EQ(allocateOk(allocator, 2, true, {}), CpuSet({1, 3}));
  EXPECT_FALSE(allocator.allocate(3, true, {}).ok());
}

TEST(CpuAllocatorTest, AssignmentsOutsideTheHostAreIgnoredAndReported) {
  CpuAllocator allocator(CpuSet({0, 1}));
  std::vector<CpuAssignment> existing;
  hold(existing, "old", CpuSet({5}), false);  // stored when the host had CPU 5
  EXPECT_EQ(allocateOk(allocator, 2, false, existing), CpuSet({0, 1}));
  std::vector<CpuUsage> usage = allocator.usage(existing);
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_EQ(usage[2].cpu, 5u);
  EXPECT_FALSE(usage[2].in_host);
  EXPECT_EQ(usage[2].exclusive, "old");
  EXPECT_TRUE(usage[0].in_host);
  EXPECT_TRUE(usage[0].free());
}

TEST(CpuAllocatorTest, UsageListsHoldersPerCpu) {
  CpuAllocator allocator(CpuSet::range(0, 2));
  std::vector<CpuAssignment> existing;
  hold(existing, "zeta", CpuSet({1}), true);
  hold(existing, "alpha", CpuSet({1}), true);
  hold(existing, "db", CpuSet({2}), false);
  std::vector<CpuUsage> usage = allocator.usage(existing);
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_TRUE(usage[0].free());
  EXPECT_EQ(usage[1].shared, (std::vector<std::string>{"alpha", "zeta"}));
  EXPECT_EQ(usage[1].exclusive, "");
  EXPECT_EQ(usage[2].exclusive, "db");
  EXPECT_TRUE(usage[2].shared.empty());
}

}  // namespace
}  // namespace scalws::controller::cpu
