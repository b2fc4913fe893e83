#include "common/cpu_set.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <random>
#include <thread>

namespace scalws::common {
namespace {

CpuSet parseOk(std::string_view text) {
  Result<CpuSet> set = parseCpuList(text);
  EXPECT_TRUE(set.ok()) << text << ": " << set.status().message();
  return set.ok() ? *set : CpuSet();
}

TEST(CpuSetTest, ParsesListsAndRanges) {
  EXPECT_EQ(parseOk(""), CpuSet());
  EXPECT_EQ(parseOk("  \n"), CpuSet());
  EXPECT_EQ(parseOk("0"), CpuSet({0}));
  EXPECT_EQ(parseOk("0,2-3"), CpuSet({0, 2, 3}));
  EXPECT_EQ(parseOk(" 0 , 2 - 3 \n"), CpuSet({0, 2, 3}));
  EXPECT_EQ(parseOk("3,1,2"), CpuSet({1, 2, 3}));
  EXPECT_EQ(parseOk("0-3,2-5"), CpuSet::range(0, 5));
  EXPECT_EQ(parseOk("7-7"), CpuSet({7}));
  EXPECT_EQ(parseOk("8191"), CpuSet({8191}));
  EXPECT_EQ(parseOk("0-3,8-11\n").toString(), "0-3,8-11");  // as sysfs writes it
}

TEST(CpuSetTest, RefusesMalformedListsNamingTheItem) {
  struct Case {
    std::string_view text;
    std::string_view mentions;
  };
  const Case cases[] = {
      {"1,,2", "empty item"}, {",", "empty item"},    {"1,", "empty item"},
      {"3-1", "'3-1'"},       {"0-7:2", "'0-7:2'"},   {"-1", "'-1'"},
      {"+1", "'+1'"},         {"a", "'a'"},           {"1-", "'1-'"},
      {"0x1", "'0x1'"},       {"8192", "'8192'"},     {"99999999999999999999", "'9999"},
      {"1 2", "'1 2'"},       {"0-8192", "'0-8192'"},
  };
  for (const Case& c : cases) {
    Result<CpuSet> set = parseCpuList(c.text);
    ASSERT_FALSE(set.ok()) << "accepted '" << c.text << "'";
    EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(set.status().message().find(c.mentions), std::string::npos)
        << c.text << " -> " << set.status().message();
  }
}

TEST(CpuSetTest, FormatsCollapsingRanges) {
  EXPECT_EQ(CpuSet().toString(), "");
  EXPECT_EQ(CpuSet({0}).toString(), "0");
  EXPECT_EQ(CpuSet({0, 1}).toString(), "0-1");
  EXPECT_EQ(CpuSet({7, 0, 2, 3, 4}).toString(), "0,2-4,7");
  EXPECT_EQ(CpuSet({1, 3, 5}).toString(), "1,3,5");
}

TEST(CpuSetTest, FormatThenParseIsIdentityForRandomSets) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 200; ++round) {
    CpuSet set;
    int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) set.add(rng() % 64);
    EXPECT_EQ(parseOk(set.toString()), set) << set.toString();
  }
}

TEST(CpuSetTest, SetOperations) {
  CpuSet set({5, 1, 3, 3});
  EXPECT_EQ(set.ids(), (std::vector<uint32_t>{1, 3, 5}));
  EXPECT_TRUE(set.contains(3));
  EXPECT_FALSE(set.contains(2));
  set.add(2);
  set.add(2);
  set.remove(5);
  set.remove(9);
  EXPECT_EQ(set, CpuSet({1, 2, 3}));
  EXPECT_EQ(CpuSet::range(0, 5).minus(CpuSet({1, 4, 9})), CpuSet({0, 2, 3, 5}));
  EXPECT_TRUE(CpuSet({1, 2}).isSubsetOf(CpuSet({0, 1, 2})));
  EXPECT_FALSE(CpuSet({1, 7}).isSubsetOf(CpuSet({0, 1, 2})));
  EXPECT_TRUE(CpuSet().isSubsetOf(CpuSet()));
  EXPECT_TRUE(CpuSet::range(5, 3).empty());
  EXPECT_EQ(CpuSet::range(UINT32_MAX - 1, UINT32_MAX).size(), 2u);
}

TEST(CpuSetTest, CurrentAffinityMatchesTheKernel) {
  Result<CpuSet> affinity = currentAffinity();
  ASSERT_TRUE(affinity.ok()) << affinity.status().message();
  ASSERT_FALSE(affinity->empty());
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  EXPECT_EQ(static_cast<int>(affinity->size()), CPU_COUNT(&mask));
  for (uint32_t cpu : affinity->ids()) EXPECT_TRUE(CPU_ISSET(cpu, &mask)) << cpu;
}

TEST(CpuSetTest, CurrentAffinityFollowsANarrowedThread) {
  Result<CpuSet> all = currentAffinity();
  ASSERT_TRUE(all.ok());
  uint32_t last = all->ids().back();
  Result<CpuSet> narrowed = Status(StatusCode::kInternal, "not run");
  // Affinity is per thread: narrow a helper thread, never the test runner.
  std::thread([&] {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    CPU_SET(last, &mask);
    if (sched_setaffinity(0, sizeof(mask), &mask) == 0) narrowed = currentAffinity();
  }).join();
  ASSERT_TRUE(narrowed.ok()) << narrowed.status().message();
  EXPECT_EQ(*narrowed, CpuSet({last}));
}

}  // namespace
}  // namespace scalws::common
