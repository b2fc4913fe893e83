// Several writers on one state.db, each with its own connection (as several scalwsctl
// requests served in parallel, or a controller racing a second one): the DB must stay
// consistent and no CPU may be handed out twice.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "controller/state/state_store.h"
#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller::state {
namespace {

using common::CpuSet;
using common::Result;
using common::StatusCode;

class ConcurrentStoreTest : public StoreTest {
 protected:
  // Starts `threads` threads at once; each opens its own store (racing the migrations on
  // a fresh file) and runs body(store, thread index).
  template <typename Body>
  void runConcurrently(int threads, const CpuSet& host, Body body) {
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < threads) std::this_thread::yield();
        Result<StateStore> store = StateStore::open(
            dbPath(), cpu::CpuAllocator(host), {.busy_timeout_ms = 30'000, .clock = clock_.fn()});
        ASSERT_TRUE(store.ok()) << store.status().message();
        body(*store, t);
      });
    }
    for (std::thread& th : pool) th.join();
  }
};

TEST_F(ConcurrentStoreTest, ExclusiveAddsNeverShareACpu) {
  const CpuSet host = CpuSet::range(0, 15);
  constexpr int kThreads = 4;
  constexpr int kAddsPerThread = 5;  // 20 attempts for 16 CPUs
  std::vector<std::vector<common::Status>> results(kThreads);
  runConcurrently(kThreads, host, [&](StateStore& store, int t) {
    for (int i = 0; i < kAddsPerThread; ++i) {
      Result<InstanceRecord> r =
          store.addInstance(instance("t" + std::to_string(t) + "-" + std::to_string(i)));
      results[t].push_back(r.status());
    }
  });
  int ok = 0;
  int exhausted = 0;
  for (const auto& per_thread : results) {
    for (const common::Status& s : per_thread) {
      if (s.ok()) {
        ++ok;
      } else {
        EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.message();
        ++exhausted;
      }
    }
  }
  EXPECT_EQ(ok, 16);
  EXPECT_EQ(exhausted, 4);
  EXPECT_EQ(count("SELECT count(*) FROM instances"), 16);
  EXPECT_EQ(count("SELECT count(*) FROM cpu_assignments"), 16);
  EXPECT_EQ(count("SELECT count(DISTINCT cpu) FROM cpu_assignments"), 16);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'instance.added'"), 16);
  EXPECT_EQ(count("SELECT count(*) FROM instances i WHERE NOT EXISTS "
                  "(SELECT 1 FROM cpu_assignments a WHERE a.instance = i.name)"),
            0);
}

TEST_F(ConcurrentStoreTest, TwentyParallelSharedAddsSpreadEvenly) {
  constexpr int kThreads = 20;
  std::vector<common::Status> results(kThreads);
  runConcurrently(kThreads, CpuSet::range(0, 3), [&](StateStore& store, int t) {
    results[t] = store.addInstance(instance("site" + std::to_string(t), 2, true)).status();
  });
  for (const common::Status& s : results) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(count("SELECT count(*) FROM instances"), 20);
  // Whatever the order, each add took the two least-loaded CPUs: 40 slots on 4 CPUs.
  for (int cpu = 0; cpu < 4; ++cpu) {
    EXPECT_EQ(count("SELECT count(*) FROM cpu_assignments WHERE cpu = " + std::to_string(cpu)), 10)
        << "cpu " << cpu;
  }
}

TEST_F(ConcurrentStoreTest, MixedWritersKeepExclusiveMeaningExclusive) {
  constexpr int kThreads = 6;
  runConcurrently(kThreads, CpuSet::range(0, 7), [&](StateStore& store, int t) {
    for (int i = 0; i < 4; ++i) {
      std::string name = "m" + std::to_string(t) + "-" + std::to_string(i);
      (void)store.addInstance(instance(name, 1 + (i % 2), t % 2 == 0));
      if (i == 2) (void)store.removeInstance("m" + std::to_string(t) + "-0");
      (void)store.appendEvent(name, "test.tick", "tick");
    }
  });
  Result<StateStore> store = StateStore::open(dbPath(), cpu::CpuAllocator(CpuSet::range(0, 7)));
  ASSERT_TRUE(store.ok());
  Result<std::vector<cpu::CpuAssignment>> assignments = store->listCpuAssignments();
  ASSERT_TRUE(assignments.ok());
  std::map<uint32_t, std::vector<cpu::CpuAssignment>> by_cpu;
  for (const cpu::CpuAssignment& a : *assignments) by_cpu[a.cpu].push_back(a);
  for (const auto& [cpu, holders] : by_cpu) {
    bool any_exclusive = false;
    for (const cpu::CpuAssignment& a : holders) any_exclusive |= !a.shared;
    if (any_exclusive) {
      EXPECT_EQ(holders.size(), 1u) << "cpu " << cpu;
    }
  }
  Result<std::vector<InstanceRecord>> all = store->listInstances();
  ASSERT_TRUE(all.ok());
  for (const InstanceRecord& r : *all) {
    EXPECT_EQ(r.assigned_cpus.size(), r.cpus) << r.name;
  }
  EXPECT_EQ(count("SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'test.tick'"), kThreads * 4);
}

}  // namespace
}  // namespace scalws::controller::state
