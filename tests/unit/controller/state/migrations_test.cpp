#include "controller/state/migrations.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "controller/cpu/cpu_allocator.h"
#include "controller/state/state_store.h"
#include "tests/support/sqlite_open.h"
#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller::state {
namespace {

using common::Result;
using common::StatusCode;
using scalws::testing::TempDir;

using ::scalws::testing::openSqliteOk;

int64_t queryInt(SqliteDb& db, const std::string& sql) {
  Result<Statement> stmt = db.prepare(sql);
  EXPECT_TRUE(stmt.ok()) << sql << ": " << stmt.status().message();
  if (!stmt.ok()) return -1;
  Result<bool> row = stmt->step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return stmt->columnInt(0);
}

std::string queryText(SqliteDb& db, const std::string& sql) {
  Result<Statement> stmt = db.prepare(sql);
  EXPECT_TRUE(stmt.ok()) << sql << ": " << stmt.status().message();
  if (!stmt.ok()) return "";
  Result<bool> row = stmt->step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return stmt->columnText(0);
}

bool hasTable(SqliteDb& db, const std::string& name) {
  return queryInt(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '" +
                          name + "'") == 1;
}

int latest() {
  return static_cast<int>(allMigrations().size());
}

TEST(MigrationsTest, ListIsNumberedWithoutGapsAndHasAnUpgradePath) {
  ASSERT_GE(allMigrations().size(), 2u);  // migration 2 exists, so "old DB" is a real path
  for (size_t i = 0; i < allMigrations().size(); ++i) {
    EXPECT_EQ(allMigrations()[i].version, static_cast<int>(i) + 1);
    EXPECT_FALSE(allMigrations()[i].summary.empty());
  }
}

TEST(MigrationsTest, EmptyDatabaseGetsTheWholeSchema) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("state.db"));
  Result<int> before = schemaVersion(db);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, 0);
  ASSERT_TRUE(migrate(db).ok());
  Result<int> after = schemaVersion(db);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, latest());
  for (const char* table : {"instances", "cpu_assignments", "php_pools", "events", "metrics_10s",
                            "metrics_1m", "schema_version"}) {
    EXPECT_TRUE(hasTable(db, table)) << table;
  }
  EXPECT_EQ(queryInt(db, "SELECT count(*) FROM schema_version"), latest());
  EXPECT_EQ(queryText(db, "SELECT summary FROM schema_version WHERE version = 2"),
            std::string(allMigrations()[1].summary));
  EXPECT_GT(queryInt(db, "SELECT min(applied_ms) FROM schema_version"), 1'600'000'000'000);
  // Running it again changes nothing.
  ASSERT_TRUE(migrate(db).ok());
  EXPECT_EQ(queryInt(db, "SELECT count(*) FROM schema_version"), latest());
  EXPECT_EQ(queryText(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(queryInt(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

TEST(MigrationsTest, OldDatabaseIsUpgradedKeepingItsRows) {
  TempDir dir;
  {
    SqliteDb db = openSqliteOk(dir.file("state.db"));
    ASSERT_TRUE(migrate(db, allMigrations().first(1)).ok());
    Result<int> v = schemaVersion(db);
    ASSERT_TRUE(v.ok());
    ASSERT_EQ(*v, 1);
    EXPECT_FALSE(hasTable(db, "metrics_10s"));
    common::Status st = db.exec(
        "INSERT INTO instances VALUES ('web', 'multi', 2, 0, 'www-data', '[[listen]]', "
        "'/etc/web.toml', 'running', 'running', '', 1000, 2000);"
        "INSERT INTO cpu_assignments VALUES ('web', 0, 0), ('web', 1, 0);"
        "INSERT INTO php_pools VALUES ('main', 'unix:/run/php.sock', 8, 0, '', 0, '', 'web', "
        "1000, 1000);"
        "INSERT INTO events (time_ms, instance, kind, message) "
        "VALUES (1500, 'web', 'instance.added', 'added');");
    ASSERT_TRUE(st.ok()) << st.message();
  }
  SqliteDb db = openSqliteOk(dir.file("state.db"));
  ASSERT_TRUE(migrate(db).ok());
  Result<int> v = schemaVersion(db);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, latest());
  EXPECT_TRUE(hasTable(db, "metrics_10s"));
  EXPECT_TRUE(hasTable(db, "metrics_1m"));
  EXPECT_EQ(queryText(db, "SELECT config_path || '|' || desired_state FROM instances"),
            "/etc/web.toml|running");
  EXPECT_EQ(queryText(db, "SELECT group_concat(cpu) FROM cpu_assignments"), "0,1");
  EXPECT_EQ(queryText(db, "SELECT instance FROM php_pools WHERE name = 'main'"), "web");
  EXPECT_EQ(queryText(db, "SELECT message FROM events"), "added");

  // The typed store reads the upgraded rows.
  Result<StateStore> store =
      StateStore::open(dir.file("state.db"), cpu::CpuAllocator(common::CpuSet::range(0, 3)));
  ASSERT_TRUE(store.ok()) << store.status().message();
  Result<InstanceRecord> web = store->getInstance("web");
  ASSERT_TRUE(web.ok()) << web.status().message();
  EXPECT_EQ(web->assigned_cpus, common::CpuSet({0, 1}));
  EXPECT_EQ(web->desired, DesiredState::kRunning);
  EXPECT_EQ(web->created_ms, 1000);
}

TEST(MigrationsTest, PoolsAssignedBeforeVersion4KeepTheirOwnName) {
  TempDir dir;
  {
    SqliteDb db = openSqliteOk(dir.file("state.db"));
    ASSERT_TRUE(migrate(db, allMigrations().first(3)).ok());
    common::Status st = db.exec(
        "INSERT INTO instances VALUES ('web', 'multi', 1, 0, 'nobody', '[[listen]]', "
        "'/etc/web.toml', 'stopped', 'stopped', '', 1000, 2000);"
        "INSERT INTO php_pools VALUES ('main', 'unix:/run/php.sock', 8, 0, '', 0, '', 'web', "
        "1000, 1000), ('spare', 'unix:/run/spare.sock', 0, 0, '', 0, '', NULL, 1000, 1000);");
    ASSERT_TRUE(st.ok()) << st.message();
  }
  SqliteDb db = openSqliteOk(dir.file("state.db"));
  ASSERT_TRUE(migrate(db).ok());
  EXPECT_EQ(queryText(db, "SELECT assigned_as FROM php_pools WHERE name = 'main'"), "main");
  EXPECT_EQ(queryInt(db,
                     "SELECT count(*) FROM php_pools WHERE name = 'spare' AND "
                     "assigned_as IS NULL"),
            1);
  EXPECT_FALSE(db.exec("UPDATE php_pools SET assigned_as = '-bad' WHERE name = 'main'").ok());
}

TEST(MigrationsTest, MetricsRowsBeforeVersion8ReadZeroForHttp3) {
  TempDir dir;
  {
    SqliteDb db = openSqliteOk(dir.file("state.db"));
    ASSERT_TRUE(migrate(db, allMigrations().first(4)).ok());
    std::string zeros;
    for (int i = 0; i < 31; ++i) zeros += ", 0";
    common::Status st = db.exec(
        "INSERT INTO instances VALUES ('web', 'multi', 1, 0, 'nobody', '[[listen]]', "
        "'/etc/web.toml', 'stopped', 'stopped', '', 1000, 2000);"
        "INSERT INTO metrics_10s VALUES ('web', 10000" +
        zeros + ", x'');" + "UPDATE metrics_10s SET bytes_out = 77;");
    ASSERT_TRUE(st.ok()) << st.message();
  }
  Result<StateStore> store =
      StateStore::open(dir.file("state.db"), cpu::CpuAllocator(common::CpuSet::range(0, 3)));
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto rows = store->listMetrics("web", MetricsResolution::k10s, 0, 20000);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].figures.bytes_out, 77u);
  EXPECT_EQ((*rows)[0].figures.http3_requests, 0u);
  EXPECT_EQ((*rows)[0].figures.quic_lost_packets, 0u);
  // And new rows keep what they are given.
  MetricsRow row = (*rows)[0];
  row.bucket_ms = 20000;
  row.figures.quic_retries = 5;
  ASSERT_TRUE(store->insertMetrics(MetricsResolution::k10s, std::span(&row, 1)).ok());
  rows = store->listMetrics("web", MetricsResolution::k10s, 20000, 30000);
  ASSERT_TRUE(rows.ok() && rows->size() == 1u);
  EXPECT_EQ((*rows)[0].figures.quic_retries, 5u);
}

TEST(MigrationsTest, DatabaseFromTheFutureIsRefused) {
  TempDir dir;
  {
    SqliteDb db = openSqliteOk(dir.file("state.db"));
    ASSERT_TRUE(migrate(db).ok());
    ASSERT_TRUE(db.exec("INSERT INTO schema_version VALUES (99, 'from a newer release', 0)").ok());
  }
  SqliteDb db = openSqliteOk(dir.file("state.db"));
  common::Status status = migrate(db);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("schema version 99"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("up to " + std::to_string(latest())), std::string::npos)
      << status.message();
  // The store refuses to open it too, and nothing was written.
  Result<StateStore> store =
      StateStore::open(dir.file("state.db"), cpu::CpuAllocator(common::CpuSet({0})));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(queryInt(db, "SELECT count(*) FROM schema_version"), latest() + 1);
}

TEST(MigrationsTest, ForeignDatabaseIsNotTouched) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("other.db"));
  ASSERT_TRUE(db.exec("CREATE TABLE invoices (id INTEGER)").ok());
  common::Status status = migrate(db);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("not a ScalWS state database"), std::string::npos);
  EXPECT_FALSE(hasTable(db, "schema_version"));
  EXPECT_FALSE(hasTable(db, "instances"));
}

TEST(MigrationsTest, AFailingMigrationLeavesThePreviousVersionWhole) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("state.db"));
  const Migration steps[] = {
      {1, "one", "CREATE TABLE a (x INTEGER);"},
      {2, "two", "CREATE TABLE b (x INTEGER); INSERT INTO a VALUES (1); CREATE TABLE oops ("},
  };
  common::Status status = migrate(db, steps);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("migration 2 (two)"), std::string::npos) << status.message();
  Result<int> v = schemaVersion(db);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 1);
  EXPECT_TRUE(hasTable(db, "a"));
  EXPECT_FALSE(hasTable(db, "b"));
  EXPECT_EQ(queryInt(db, "SELECT count(*) FROM a"), 0);
  EXPECT_FALSE(db.inTransaction());
}

TEST(MigrationsTest, BadlyNumberedListIsABug) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("state.db"));
  const Migration steps[] = {{1, "one", "CREATE TABLE a (x);"}, {3, "three", "SELECT 1;"}};
  EXPECT_EQ(migrate(db, steps).code(), StatusCode::kInternal);
  EXPECT_FALSE(hasTable(db, "a"));
}

TEST(MigrationsTest, ConcurrentOpenersMigrateOnce) {
  TempDir dir;
  const std::string path = dir.file("state.db");
  std::vector<common::Status> results(6);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      Result<SqliteDb> db = SqliteDb::open(path, {.busy_timeout_ms = 20'000});
      results[i] = db.ok() ? migrate(*db) : db.status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const common::Status& s : results) EXPECT_TRUE(s.ok()) << s.message();
  SqliteDb db = openSqliteOk(path);
  EXPECT_EQ(queryInt(db, "SELECT count(*) FROM schema_version"), latest());
}

}  // namespace
}  // namespace scalws::controller::state
