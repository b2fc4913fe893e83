// The `workers` rows (migration 3): what a restarted controller re-attaches from.
#include <gtest/gtest.h>

#include "controller/state/migrations.h"
#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller::state {
namespace {

using common::StatusCode;

class WorkersStoreTest : public StoreTest {
 protected:
  static WorkerRecord worker(int64_t pid, const std::string& instance, uint32_t slot) {
    WorkerRecord r;
    r.pid = pid;
    r.instance = instance;
    r.slot = slot;
    r.start_ticks = 1000 + static_cast<uint64_t>(pid);
    r.attach_address = "3a2b1";
    r.started_ms = kStartMs;
    return r;
  }
};

TEST_F(WorkersStoreTest, RecordListAndForget) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  ASSERT_TRUE(store.addInstance(instance("api")).ok());
  ASSERT_TRUE(store.recordWorker(worker(30, "web", 1)).ok());
  ASSERT_TRUE(store.recordWorker(worker(20, "web", 0)).ok());
  ASSERT_TRUE(store.recordWorker(worker(10, "api", 0)).ok());

  auto all = store.listWorkers(std::nullopt);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0], worker(10, "api", 0));  // by instance, then slot
  EXPECT_EQ((*all)[1], worker(20, "web", 0));
  EXPECT_EQ((*all)[2], worker(30, "web", 1));

  auto web = store.listWorkers(std::string("web"));
  ASSERT_TRUE(web.ok());
  EXPECT_EQ(web->size(), 2u);

  ASSERT_TRUE(store.forgetWorker(20).ok());
  ASSERT_TRUE(store.forgetWorker(20).ok());  // gone already: still fine
  EXPECT_EQ(count("SELECT count(*) FROM workers"), 2);
}

TEST_F(WorkersStoreTest, SamePidReplacesTheRow) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  WorkerRecord r = worker(42, "web", 0);
  ASSERT_TRUE(store.recordWorker(r).ok());
  r.attach_address = "ffff0";
  ASSERT_TRUE(store.recordWorker(r).ok());
  auto rows = store.listWorkers(std::nullopt);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().attach_address, "ffff0");
}

TEST_F(WorkersStoreTest, UnknownInstanceIsRefusedAndRemovalTakesTheRows) {
  StateStore store = open();
  common::Status missing = store.recordWorker(worker(5, "ghost", 0));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_EQ(store.recordWorker(worker(0, "ghost", 0)).code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  ASSERT_TRUE(store.recordWorker(worker(5, "web", 0)).ok());
  ASSERT_TRUE(store.removeInstance("web").ok());
  EXPECT_EQ(count("SELECT count(*) FROM workers"), 0);
}

TEST_F(WorkersStoreTest, DatabaseAtVersionTwoGainsTheTable) {
  {
    common::Result<SqliteDb> db = SqliteDb::open(dbPath());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(migrate(*db, allMigrations().first(2)).ok());
    ASSERT_TRUE(db->exec("INSERT INTO instances VALUES ('web', 'multi', 1, 0, 'nobody', "
                         "'[[listen]]', '/etc/web.toml', 'running', 'running', '', 1, 2)")
                    .ok());
  }
  StateStore store = open();
  EXPECT_EQ(count("SELECT max(version) FROM schema_version"),
            static_cast<int64_t>(allMigrations().size()));
  ASSERT_TRUE(store.recordWorker(worker(7, "web", 0)).ok());
  EXPECT_EQ(count("SELECT count(*) FROM workers WHERE instance = 'web'"), 1);
}

}  // namespace
}  // namespace scalws::controller::state

namespace scalws::controller::state {
namespace {

// Migrations 5 and 10: what the workers were told, and each worker's digest of it.
TEST_F(WorkersStoreTest, LaunchesAndDigestsAreKeptAndGoWithTheInstance) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  auto none = store.getLaunch("web");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  LaunchRecord launch{"x = 1",
                      "/etc/scalws/web.toml",
                      {{"main", "unix:/run/a.sock", 8, 4}},
                      0,
                      {{"api", {"/run/scalws/apps/api/0.sock", "/run/scalws/apps/api/1.sock"}}}};
  ASSERT_TRUE(store.saveLaunch("web", launch).ok());
  launch.config = "x = 2";
  ASSERT_TRUE(store.saveLaunch("web", launch).ok());  // replaces
  auto back = store.getLaunch("web");
  ASSERT_TRUE(back.ok() && back->has_value()) << back.status().message();
  EXPECT_EQ((*back)->config, "x = 2");
  EXPECT_EQ((*back)->php_pools, launch.php_pools);
  EXPECT_EQ((*back)->apps, launch.apps);  // migration 10
  EXPECT_EQ((*back)->updated_ms, kStartMs);
  EXPECT_EQ(store.saveLaunch("ghost", launch).code(), StatusCode::kNotFound);

  WorkerRecord w = worker(42, "web", 0);
  w.launch_digest = "aa";
  ASSERT_TRUE(store.recordWorker(w).ok());
  ASSERT_TRUE(store.setWorkerDigest(42, "bb").ok());
  EXPECT_EQ((*store.listWorkers(std::nullopt))[0].launch_digest, "bb");
  ASSERT_TRUE(store.setWorkerDigest(7, "cc").ok());  // no such row: fine

  ASSERT_TRUE(store.removeInstance("web").ok());
  EXPECT_EQ(count("SELECT count(*) FROM launches"), 0);
}

TEST_F(WorkersStoreTest, AnUnreadablePoolListIsAnError) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  execOther(
      "INSERT INTO launches (instance, config, config_path, php_pools, updated_ms) "
      "VALUES ('web', 'x', '/x.toml', 'not json', 0)");
  EXPECT_EQ(store.getLaunch("web").status().code(), StatusCode::kIoError);
}

TEST_F(WorkersStoreTest, AnUnreadableAppListIsAnErrorAndAnAbsentOneIsEmpty) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  // A row written before migration 10 has the column's default: no apps.
  execOther(
      "INSERT INTO launches (instance, config, config_path, php_pools, updated_ms) "
      "VALUES ('web', 'x', '/x.toml', '[]', 0)");
  auto launch = store.getLaunch("web");
  ASSERT_TRUE(launch.ok() && launch->has_value()) << launch.status().message();
  EXPECT_TRUE((*launch)->apps.empty());
  execOther("UPDATE launches SET apps = '[{\"name\": \"\"}]'");
  EXPECT_EQ(store.getLaunch("web").status().code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace scalws::controller::state
