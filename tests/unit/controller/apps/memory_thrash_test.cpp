// ThrashWatch: a cgroup rereading its evicted pages at its limit, told from one that only
// sits at its limit or only streams a file.
#include "controller/apps/memory_thrash.h"

#include <gtest/gtest.h>

namespace scalws::controller {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kLimit = 64u << 20;

// One look: `refault_mib` MiB read back and `majors` major faults since the last one.
struct Cgroup {
  CgroupUsage u{.current_bytes = kLimit - 4096, .limit_bytes = kLimit};
  CgroupUsage look(uint64_t refault_mib, uint64_t majors) {
    u.refaulted_pages += (refault_mib << 20) / kPage;
    u.major_faults += majors;
    return u;
  }
};

TEST(ThrashWatch, TenLooksInARowAtTheLimitRereadingCodeIsThrashing) {
  ThrashWatch w(kPage);
  Cgroup c;
  EXPECT_FALSE(w.thrashing(c.look(0, 0)));  // the first look only sets the baseline
  for (int i = 1; i < kThrashLooks; ++i) EXPECT_FALSE(w.thrashing(c.look(300, 40))) << i;
  EXPECT_TRUE(w.thrashing(c.look(300, 40)));
  EXPECT_EQ(w.refaultedBytesPerLook(), 300u << 20);
}

TEST(ThrashWatch, OneCalmLookStartsTheCountAgain) {
  ThrashWatch w(kPage);
  Cgroup c;
  w.thrashing(c.look(0, 0));
  for (int i = 1; i < kThrashLooks; ++i) w.thrashing(c.look(300, 40));
  EXPECT_FALSE(w.thrashing(c.look(1, 40)));  // less than a quarter of the limit read back
  for (int i = 1; i < kThrashLooks; ++i) EXPECT_FALSE(w.thrashing(c.look(300, 40))) << i;
  EXPECT_TRUE(w.thrashing(c.look(300, 40)));
}

TEST(ThrashWatch, StreamingAFileThroughReadOrSittingBelowTheLimitIsNot) {
  ThrashWatch streaming(kPage);
  Cgroup s;
  streaming.thrashing(s.look(0, 0));
  // read() of a file larger than the limit: refaults, but no major fault.
  for (int i = 0; i < 3 * kThrashLooks; ++i) EXPECT_FALSE(streaming.thrashing(s.look(300, 0)));

  ThrashWatch below(kPage);
  Cgroup b;
  b.u.current_bytes = kLimit / 2;
  below.thrashing(b.look(0, 0));
  for (int i = 0; i < 3 * kThrashLooks; ++i) EXPECT_FALSE(below.thrashing(b.look(300, 40)));

  ThrashWatch unlimited(kPage);
  Cgroup u;
  u.u.limit_bytes = 0;
  for (int i = 0; i < 3 * kThrashLooks; ++i) EXPECT_FALSE(unlimited.thrashing(u.look(300, 40)));
}

TEST(ThrashWatch, CountersThatGoBackOrAResetStartOver) {
  ThrashWatch w(kPage);
  Cgroup c;
  w.thrashing(c.look(0, 0));
  for (int i = 1; i < kThrashLooks; ++i) w.thrashing(c.look(300, 40));
  Cgroup fresh;  // the cgroup made again: its counters restart at 0
  EXPECT_FALSE(w.thrashing(fresh.look(0, 0)));
  for (int i = 1; i < kThrashLooks; ++i) EXPECT_FALSE(w.thrashing(fresh.look(300, 40))) << i;
  w.reset();  // a new process
  EXPECT_FALSE(w.thrashing(fresh.look(300, 40)));
  EXPECT_EQ(w.refaultedBytesPerLook(), 0u);
}

}  // namespace
}  // namespace scalws::controller
