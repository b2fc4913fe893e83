// Shared set-up for the StateStore tests: a temp state dir, a fake clock and helpers to
// open stores and count rows behind the store's back.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "controller/state/state_store.h"
#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller::state {

// Unix ms, advanced by hand; shared by every store a test opens.
class FakeClock {
 public:
  explicit FakeClock(int64_t start_ms) : now_(std::make_shared<std::atomic<int64_t>>(start_ms)) {}
  int64_t now() const { return now_->load(); }
  void set(int64_t ms) { now_->store(ms); }
  void advance(int64_t ms) { now_->fetch_add(ms); }
  StateStore::Clock fn() const {
    return [now = now_] { return now->load(); };
  }

 private:
  std::shared_ptr<std::atomic<int64_t>> now_;
};

class StoreTest : public ::testing::Test {
 protected:
  static constexpr int64_t kStartMs = 1'700'000'000'000;

  StoreTest() : clock_(kStartMs) {}

  std::string dbPath() const { return StateStore::dbPath(dir_.path()); }

  StateStore open(common::CpuSet host = common::CpuSet::range(0, 3)) {
    common::Result<StateStore> store =
        StateStore::open(dbPath(), cpu::CpuAllocator(std::move(host)),
                         {.busy_timeout_ms = 20'000, .clock = clock_.fn()});
    EXPECT_TRUE(store.ok()) << store.status().message();
    if (!store.ok()) std::abort();  // every test needs its store
    return std::move(*store);
  }

  static NewInstance instance(const std::string& name, uint32_t cpus = 1, bool shared = false) {
    NewInstance spec;
    spec.name = name;
    spec.cpus = cpus;
    spec.shared_cpus = shared;
    spec.user = "www-data";
    spec.config = "[[listen]]\naddress = \"127.0.0.1:8080\"\n";
    spec.config_path = "/etc/scalws/" + name + ".toml";
    return spec;
  }

  static PoolRecord externalPool(const std::string& name) {
    PoolRecord pool;
    pool.name = name;
    pool.address = "unix:/run/php/" + name + ".sock";
    pool.max_conns = 8;
    return pool;
  }

  // Counts rows through a separate connection, so the store's own view cannot hide them.
  int64_t count(const std::string& sql) {
    common::Result<SqliteDb> db = SqliteDb::open(dbPath());
    EXPECT_TRUE(db.ok()) << db.status().message();
    if (!db.ok()) return -1;
    common::Result<Statement> stmt = db->prepare(sql);
    EXPECT_TRUE(stmt.ok()) << sql << ": " << stmt.status().message();
    if (!stmt.ok()) return -1;
    common::Result<bool> row = stmt->step();
    EXPECT_TRUE(row.ok() && *row) << sql;
    return stmt->columnInt(0);
  }

  // Runs SQL through a separate connection (e.g. to install a failing trigger).
  void execOther(const std::string& sql) {
    common::Result<SqliteDb> db = SqliteDb::open(dbPath());
    ASSERT_TRUE(db.ok()) << db.status().message();
    common::Status status = db->exec(sql);
    ASSERT_TRUE(status.ok()) << status.message();
  }

  scalws::testing::TempDir dir_;
  FakeClock clock_;
};

}  // namespace scalws::controller::state
