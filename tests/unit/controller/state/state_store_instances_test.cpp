#include <gtest/gtest.h>

#include "controller/state/state_store.h"
#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller::state {
namespace {

using common::CpuSet;
using common::Result;
using common::StatusCode;

class InstanceStoreTest : public StoreTest {};

TEST_F(InstanceStoreTest, AddStoresTheInstanceWithItsCpusAndAnEvent) {
  StateStore store = open();
  NewInstance spec = instance("web", 2);
  spec.mode = WorkerMode::kSingle;
  spec.desired = DesiredState::kRunning;
  Result<InstanceRecord> added = store.addInstance(spec);
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ(added->assigned_cpus, CpuSet({0, 1}));
  EXPECT_EQ(added->status, "stopped");
  EXPECT_EQ(added->created_ms, kStartMs);

  Result<InstanceRecord> got = store.getInstance("web");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->name, "web");
  EXPECT_EQ(got->mode, WorkerMode::kSingle);
  EXPECT_EQ(got->cpus, 2u);
  EXPECT_FALSE(got->shared_cpus);
  EXPECT_EQ(got->user, "www-data");
  EXPECT_EQ(got->config, spec.config);
  EXPECT_EQ(got->config_path, "/etc/scalws/web.toml");
  EXPECT_EQ(got->desired, DesiredState::kRunning);
  EXPECT_EQ(got->status, "stopped");
  EXPECT_EQ(got->status_reason, "");
  EXPECT_EQ(got->created_ms, kStartMs);
  EXPECT_EQ(got->updated_ms, kStartMs);
  EXPECT_EQ(got->assigned_cpus, CpuSet({0, 1}));

  Result<std::vector<EventRecord>> events = store.recentEvents("web", 10);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].kind, kEventInstanceAdded);
  EXPECT_NE((*events)[0].message.find("CPUs 0-1"), std::string::npos) << (*events)[0].message;
  EXPECT_EQ(count("SELECT count(*) FROM cpu_assignments WHERE instance = 'web' AND shared = 0"), 2);
}

TEST_F(InstanceStoreTest, ListIsSortedByNameWithCpus) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("zeta")).ok());
  ASSERT_TRUE(store.addInstance(instance("alpha", 2, true)).ok());
  Result<std::vector<InstanceRecord>> all = store.listInstances();
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "alpha");
  EXPECT_TRUE((*all)[0].shared_cpus);
  EXPECT_EQ((*all)[0].assigned_cpus, CpuSet({1, 2}));  // least-loaded: 0 is zeta's
  EXPECT_EQ((*all)[1].name, "zeta");
  EXPECT_EQ((*all)[1].assigned_cpus, CpuSet({0}));

  Result<std::vector<cpu::CpuUsage>> usage = store.cpuUsage();
  ASSERT_TRUE(usage.ok());
  ASSERT_EQ(usage->size(), 4u);
  EXPECT_EQ((*usage)[0].exclusive, "zeta");
  EXPECT_EQ((*usage)[1].shared, std::vector<std::string>{"alpha"});
  EXPECT_TRUE((*usage)[3].free());
}

TEST_F(InstanceStoreTest, DuplicateNameIsRefusedAndChangesNothing) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  Result<InstanceRecord> again = store.addInstance(instance("web", 2));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(), "instance 'web' already exists");
  EXPECT_EQ(count("SELECT count(*) FROM cpu_assignments"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM events"), 1);
}

TEST_F(InstanceStoreTest, BadFieldsAreRefused) {
  StateStore store = open();
  for (const char* name : {"", "-web", "we b", "web/..", "a;b", "ünï"}) {
    Result<InstanceRecord> r = store.addInstance(instance(name));
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(store.addInstance(instance(std::string(65, 'a'))).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(store.addInstance(instance(std::string(64, 'a'))).ok());
  EXPECT_TRUE(store.addInstance(instance("My_site-2.example")).ok());
  NewInstance no_user = instance("nouser");
  no_user.user.clear();
  EXPECT_EQ(store.addInstance(no_user).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.addInstance(instance("nocpu", 0)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(count("SELECT count(*) FROM instances"), 2);
}

TEST_F(InstanceStoreTest, ExhaustedCpusAddNothing) {
  StateStore store = open(CpuSet::range(0, 3));
  ASSERT_TRUE(store.addInstance(instance("big", 3)).ok());
  Result<InstanceRecord> r = store.addInstance(instance("more", 2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(
      r.status().message().find("instance more: 2 exclusive CPU(s) wanted but only 1 free (3)"),
      std::string::npos)
      << r.status().message();
  EXPECT_EQ(count("SELECT count(*) FROM instances WHERE name = 'more'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM cpu_assignments"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM events"), 1);
  // Shared cannot use exclusive CPUs either; the one free CPU still can be shared.
  EXPECT_FALSE(store.addInstance(instance("s", 2, true)).ok());
  Result<InstanceRecord> s = store.addInstance(instance("s", 1, true));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->assigned_cpus, CpuSet({3}));
}

// A failure after the instance row is written (here: a trigger refusing the second CPU
// row) must leave no trace of the instance.
TEST_F(InstanceStoreTest, AddIsAtomicWhenAStepFailsMidway) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("first")).ok());
  execOther(
      "CREATE TRIGGER fail_cpu_2 BEFORE INSERT ON cpu_assignments WHEN NEW.cpu = 2 "
      "BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");
  Result<InstanceRecord> r = store.addInstance(instance("web", 2));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("injected failure"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(store.dbForTest().inTransaction());
  EXPECT_EQ(count("SELECT count(*) FROM instances"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM cpu_assignments"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM events"), 1);
  EXPECT_EQ(store.getInstance("web").status().code(), StatusCode::kNotFound);
  // The store stays usable.
  execOther("DROP TRIGGER fail_cpu_2");
  EXPECT_TRUE(store.addInstance(instance("web", 2)).ok());
}

TEST_F(InstanceStoreTest, TheSchemaRefusesASecondHolderOfAnExclusiveCpu) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("a")).ok());           // CPU 0, exclusive
  ASSERT_TRUE(store.addInstance(instance("b", 1, true)).ok());  // CPU 1, shared
  ASSERT_TRUE(store.addInstance(instance("c", 1, true)).ok());  // CPU 2, shared
  Result<SqliteDb> db = SqliteDb::open(dbPath());
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db->exec("INSERT INTO cpu_assignments VALUES ('b', 0, 1)").code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(db->exec("INSERT INTO cpu_assignments VALUES ('a', 1, 0)").code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(db->exec("INSERT INTO cpu_assignments VALUES ('c', 1, 1)").ok());
}

TEST_F(InstanceStoreTest, UpdatesBumpUpdatedTimeAndRecordEvents) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  clock_.advance(5000);
  ASSERT_TRUE(store.setInstanceConfig("web", "# new\n", "/srv/new.toml").ok());
  clock_.advance(5000);
  ASSERT_TRUE(store.setDesiredState("web", DesiredState::kRunning).ok());
  ASSERT_TRUE(store.setDesiredState("web", DesiredState::kRunning).ok());  // no-op
  clock_.advance(5000);
  ASSERT_TRUE(store.setStatus("web", "failed", "crashed 5 times in 60 s").ok());
  ASSERT_TRUE(store.setStatus("web", "failed", "crashed 5 times in 60 s").ok());  // no-op

  Result<InstanceRecord> got = store.getInstance("web");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->config, "# new\n");
  EXPECT_EQ(got->config_path, "/srv/new.toml");
  EXPECT_EQ(got->desired, DesiredState::kRunning);
  EXPECT_EQ(got->status, "failed");
  EXPECT_EQ(got->status_reason, "crashed 5 times in 60 s");
  EXPECT_EQ(got->created_ms, kStartMs);
  EXPECT_EQ(got->updated_ms, kStartMs + 15000);

  Result<std::vector<EventRecord>> events = store.recentEvents("web", 10);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 4u);
  EXPECT_EQ((*events)[0].kind, kEventInstanceStatus);
  EXPECT_EQ((*events)[0].message, "failed: crashed 5 times in 60 s");
  EXPECT_EQ((*events)[0].time_ms, kStartMs + 15000);
  EXPECT_EQ((*events)[1].kind, kEventInstanceDesired);
  EXPECT_EQ((*events)[1].message, "desired state running");
  EXPECT_EQ((*events)[2].kind, kEventInstanceConfig);
  EXPECT_EQ((*events)[3].kind, kEventInstanceAdded);
}

TEST_F(InstanceStoreTest, UnknownInstanceIsNotFound) {
  StateStore store = open();
  EXPECT_EQ(store.getInstance("ghost").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.getInstance("ghost").status().message(), "no instance named 'ghost'");
  EXPECT_EQ(store.setInstanceConfig("ghost", "", "").code(), StatusCode::kNotFound);
  EXPECT_EQ(store.setDesiredState("ghost", DesiredState::kRunning).code(), StatusCode::kNotFound);
  EXPECT_EQ(store.setStatus("ghost", "running", "").code(), StatusCode::kNotFound);
  EXPECT_EQ(store.removeInstance("ghost").code(), StatusCode::kNotFound);
  EXPECT_EQ(count("SELECT count(*) FROM events"), 0);
}

TEST_F(InstanceStoreTest, RemoveCascadesReleasesPoolsAndKeepsHistory) {
  StateStore store = open(CpuSet::range(0, 1));
  ASSERT_TRUE(store.addInstance(instance("web", 2)).ok());
  ASSERT_TRUE(store.addPool(externalPool("main")).ok());
  ASSERT_TRUE(store.assignPool("main", "web").ok());
  MetricsRow row;
  row.instance = "web";
  row.bucket_ms = 10'000;
  ASSERT_TRUE(store.insertMetrics(MetricsResolution::k10s, std::span(&row, 1)).ok());
  row.bucket_ms = 60'000;
  ASSERT_TRUE(store.insertMetrics(MetricsResolution::k1m, std::span(&row, 1)).ok());
  EXPECT_EQ(count("SELECT count(*) FROM metrics_10s") + count("SELECT count(*) FROM metrics_1m"),
            2);

  ASSERT_TRUE(store.removeInstance("web").ok());
  EXPECT_EQ(store.getInstance("web").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(count("SELECT count(*) FROM cpu_assignments"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM metrics_10s"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM metrics_1m"), 0);
  Result<PoolRecord> pool = store.getPool("main");
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->instance, std::nullopt);
  Result<std::vector<EventRecord>> events = store.recentEvents("web", 2);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].kind, kEventInstanceRemoved);
  EXPECT_EQ((*events)[1].kind, kEventPoolReleased);
  // Its CPUs are free again.
  Result<InstanceRecord> next = store.addInstance(instance("next", 2));
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_EQ(next->assigned_cpus, CpuSet({0, 1}));
}

TEST_F(InstanceStoreTest, RemoveIsAtomicWhenAStepFailsMidway) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web", 2)).ok());
  ASSERT_TRUE(store.addPool(externalPool("main")).ok());
  ASSERT_TRUE(store.assignPool("main", "web").ok());
  // Fails on the last write of removeInstance, after the DELETE and its cascades.
  execOther(
      "CREATE TRIGGER fail_removed BEFORE INSERT ON events WHEN NEW.kind = 'instance.removed' "
      "BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");
  common::Status status = store.removeInstance("web");
  ASSERT_FALSE(status.ok());
  Result<InstanceRecord> web = store.getInstance("web");
  ASSERT_TRUE(web.ok()) << web.status().message();
  EXPECT_EQ(web->assigned_cpus, CpuSet({0, 1}));
  Result<PoolRecord> pool = store.getPool("main");
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->instance, "web");
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'pool.released'"), 0);
}

TEST_F(InstanceStoreTest, StateSurvivesReopening) {
  {
    StateStore store = open();
    ASSERT_TRUE(store.addInstance(instance("web", 2)).ok());
    ASSERT_TRUE(store.setDesiredState("web", DesiredState::kRunning).ok());
  }
  StateStore store = open();
  Result<InstanceRecord> web = store.getInstance("web");
  ASSERT_TRUE(web.ok());
  EXPECT_EQ(web->desired, DesiredState::kRunning);
  EXPECT_EQ(web->assigned_cpus, CpuSet({0, 1}));
  // The assignments persisted: a new instance gets the next CPUs.
  Result<InstanceRecord> next = store.addInstance(instance("next", 2));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->assigned_cpus, CpuSet({2, 3}));
}

}  // namespace
}  // namespace scalws::controller::state
