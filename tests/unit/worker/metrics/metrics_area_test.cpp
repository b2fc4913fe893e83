#include "worker/metrics/metrics_area.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace scalws::worker {
namespace {

using common::metrics::Action;

TEST(MetricsAreaTest, ChildProcessesWriteTheirSlotsAndTheParentSeesTheSum) {
  auto area = MetricsArea::create(4);
  ASSERT_TRUE(area.ok());
  std::unique_ptr<MetricsArea> a = std::move(area).value();
  for (size_t slot = 0; slot < 2; ++slot) {
    pid_t pid = fork();
    if (pid == 0) {
      LoopCounters* c = a->slot(slot);
      for (int i = 0; i < 100; ++i) c->countRequest(200, Action::kRespond, 150);
      c->countRequest(404, Action::kStatic, 20);
      c->bytes_out.add(1000);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
  }
  auto total = a->total();
  EXPECT_EQ(total.requests(), 202u);
  EXPECT_EQ(total.requests_by_class[1], 200u);
  EXPECT_EQ(total.requests_by_class[3], 2u);
  EXPECT_EQ(total.requests_by_action[static_cast<size_t>(Action::kRespond)], 200u);
  EXPECT_EQ(total.bytes_out, 2000u);
  EXPECT_EQ(total.latency_sum_us, 2u * (100 * 150 + 20));
}

TEST(MetricsAreaTest, RetiringASlotKeepsTotalsMonotonic) {
  auto area = MetricsArea::create(2);
  ASSERT_TRUE(area.ok());
  std::unique_ptr<MetricsArea> a = std::move(area).value();
  LoopCounters* c = a->slot(0);
  c->countRequest(200, Action::kStatic, 10);
  c->conn_accepted.add(3);
  c->conn_closed.add(1);
  c->conn_active.add(2);
  c->cpu_us.set(500);
  c->rss_bytes.set(1 << 20);
  auto before = a->total();
  a->retire(0);  // its process died
  auto after = a->total();
  EXPECT_EQ(after.requests(), before.requests());
  EXPECT_EQ(after.conn_accepted, 3u);
  EXPECT_EQ(after.conn_closed, 3u);  // its open connections died with it
  EXPECT_EQ(after.conn_active, 0u);
  EXPECT_EQ(after.cpu_us, 500u);
  EXPECT_EQ(after.rss_bytes, 0u);
  // The replacement starts from zero in the same slot; totals keep growing.
  c->countRequest(200, Action::kStatic, 10);
  EXPECT_EQ(a->total().requests(), before.requests() + 1);
}

TEST(MetricsAreaTest, UnclaimedSlotsAreNeverTouched) {
  constexpr size_t kSlots = 2048;
  auto area = MetricsArea::create(kSlots, false);
  ASSERT_TRUE(area.ok());
  std::unique_ptr<MetricsArea> a = std::move(area).value();
  EXPECT_EQ(a->total().requests(), 0u);
  a->claim(1);
  a->slot(1)->countRequest(200, Action::kRespond, 10);
  EXPECT_EQ(a->total().requests(), 1u);
  // The pages past the claimed slots stay unmapped: total() did not fault them in.
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  uintptr_t last = reinterpret_cast<uintptr_t>(a->slot(kSlots - 1));
  uintptr_t start = (reinterpret_cast<uintptr_t>(a->slot(64)) + page - 1) & ~(page - 1);
  size_t pages = (last - start) / page;
  std::vector<unsigned char> resident(pages);
  ASSERT_EQ(mincore(reinterpret_cast<void*>(start), pages * page, resident.data()), 0);
  size_t touched = 0;
  for (unsigned char r : resident) touched += r & 1;
  EXPECT_EQ(touched, 0u);
  // A claimed slot starts from zero even when its memory held counts before.
  a->retire(1);
  a->claim(1);
  EXPECT_EQ(a->slot(1)->requests_by_class[1].value(), 0u);
  EXPECT_EQ(a->total().requests(), 1u);  // kept in the retired total
}

}  // namespace
}  // namespace scalws::worker
