#include "controller/state/sqlite_db.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/support/sqlite_open.h"
#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller::state {
namespace {

using common::Result;
using common::StatusCode;
using scalws::testing::TempDir;

using ::scalws::testing::openSqliteOk;

std::string pragma(SqliteDb& db, const std::string& name) {
  Result<Statement> stmt = db.prepare("PRAGMA " + name);
  EXPECT_TRUE(stmt.ok()) << stmt.status().message();
  if (!stmt.ok()) return "";
  Result<bool> row = stmt->step();
  EXPECT_TRUE(row.ok() && *row);
  return stmt->columnText(0);
}

TEST(SqliteDbTest, OpenAppliesTheDurabilitySettings) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("t.db"));
  EXPECT_EQ(pragma(db, "journal_mode"), "wal");
  EXPECT_EQ(pragma(db, "synchronous"), "2");  // FULL
  EXPECT_EQ(pragma(db, "foreign_keys"), "1");
  EXPECT_EQ(pragma(db, "busy_timeout"), "5000");
  EXPECT_EQ(db.path(), dir.file("t.db"));
}

TEST(SqliteDbTest, BindAndReadBackEveryType) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("t.db"));
  ASSERT_TRUE(db.exec("CREATE TABLE t (i INTEGER, s TEXT, b BLOB, n TEXT)").ok());
  Result<Statement> insert = db.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)");
  ASSERT_TRUE(insert.ok());
  const std::string blob("a\0b\xff", 4);
  ASSERT_TRUE(
      insert->bindAll(int64_t{INT64_MIN}, "héllo", std::string("x"), std::optional<std::string>())
          .ok());
  ASSERT_TRUE(insert->bindBlob(3, blob).ok());
  ASSERT_TRUE(insert->run().ok());
  EXPECT_EQ(db.changes(), 1);
  EXPECT_EQ(db.lastInsertRowid(), 1);
  ASSERT_TRUE(insert->reset().ok());
  ASSERT_TRUE(insert
                  ->bindAll(int64_t{INT64_MAX}, std::string_view(""), std::nullopt,
                            std::optional<std::string>("set"))
                  .ok());
  ASSERT_TRUE(insert->bindBlob(3, "").ok());
  ASSERT_TRUE(insert->run().ok());

  Result<Statement> select = db.prepare("SELECT i, s, b, n, typeof(b) FROM t ORDER BY rowid");
  ASSERT_TRUE(select.ok());
  Result<bool> row = select->step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(select->columnInt(0), INT64_MIN);
  EXPECT_EQ(select->columnText(1), "héllo");
  EXPECT_EQ(select->columnBlob(2), blob);
  EXPECT_TRUE(select->columnIsNull(3));
  EXPECT_EQ(select->columnOptionalText(3), std::nullopt);
  row = select->step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(select->columnInt(0), INT64_MAX);
  EXPECT_EQ(select->columnText(1), "");
  EXPECT_FALSE(select->columnIsNull(1));
  EXPECT_EQ(select->columnText(2), "");
  EXPECT_EQ(select->columnText(4), "blob");  // an empty blob, not NULL
  EXPECT_EQ(select->columnOptionalText(3), "set");
  row = select->step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

TEST(SqliteDbTest, ErrorsAreMappedToStatusCodes) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("t.db"));
  ASSERT_TRUE(db.exec("CREATE TABLE p (id INTEGER PRIMARY KEY);"
                      "CREATE TABLE c (p INTEGER REFERENCES p (id), v INTEGER CHECK (v > 0));"
                      "INSERT INTO p VALUES (1);")
                  .ok());
  Result<Statement> bad = db.prepare("SELEKT nonsense");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("syntax error"), std::string::npos)
      << bad.status().message();

  common::Status dup = db.exec("INSERT INTO p VALUES (1)");
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists) << dup.message();
  EXPECT_NE(dup.message().find("UNIQUE constraint failed: p.id"), std::string::npos)
      << dup.message();
  common::Status fk = db.exec("INSERT INTO c VALUES (2, 1)");
  EXPECT_EQ(fk.code(), StatusCode::kFailedPrecondition) << fk.message();
  EXPECT_NE(fk.message().find("FOREIGN KEY"), std::string::npos) << fk.message();
  common::Status check = db.exec("INSERT INTO c VALUES (1, 0)");
  EXPECT_EQ(check.code(), StatusCode::kFailedPrecondition) << check.message();

  Result<Statement> range = db.prepare("SELECT ?1");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->bind(2, int64_t{1}).code(), StatusCode::kInvalidArgument);
}

// A full disk is SQLITE_FULL with no errno kept (the integration test fills a real one);
// the page limit gives the same code here.
TEST(SqliteDbTest, AFullDatabaseSaysNoSpaceLeftOnDevice) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("t.db"));
  ASSERT_TRUE(db.exec("CREATE TABLE t (v BLOB)").ok());
  ASSERT_TRUE(db.exec("PRAGMA max_page_count = 8").ok());
  common::Status full;
  for (int i = 0; i < 100 && full.ok(); ++i) {
    full = db.exec("INSERT INTO t VALUES (zeroblob(4000))");
  }
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted) << full.message();
  EXPECT_NE(full.message().find("database or disk is full (No space left on device)"),
            std::string::npos)
      << full.message();
}

TEST(SqliteDbTest, TransactionRollsBackUnlessCommitted) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("t.db"));
  ASSERT_TRUE(db.exec("CREATE TABLE t (v INTEGER)").ok());
  {
    Result<Transaction> txn = Transaction::begin(db, Transaction::Kind::kImmediate);
    ASSERT_TRUE(txn.ok());
    EXPECT_TRUE(db.inTransaction());
    ASSERT_TRUE(db.exec("INSERT INTO t VALUES (1)").ok());
  }
  EXPECT_FALSE(db.inTransaction());
  {
    Result<Transaction> txn = Transaction::begin(db, Transaction::Kind::kImmediate);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(db.exec("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(txn->commit().ok());
    EXPECT_FALSE(txn->commit().ok());  // a finished transaction cannot commit again
  }
  SqliteDb other = openSqliteOk(dir.file("t.db"));
  Result<Statement> stmt = other.prepare("SELECT group_concat(v) FROM t");
  ASSERT_TRUE(stmt.ok());
  ASSERT_TRUE(stmt->step().ok());
  EXPECT_EQ(stmt->columnText(0), "2");
}

TEST(SqliteDbTest, ASecondWriterWaitsForTheBusyTimeoutThenTimesOut) {
  TempDir dir;
  SqliteDb first = openSqliteOk(dir.file("t.db"));
  SqliteDb second = openSqliteOk(dir.file("t.db"), {.busy_timeout_ms = 200});
  Result<Transaction> held = Transaction::begin(first, Transaction::Kind::kImmediate);
  ASSERT_TRUE(held.ok());
  auto start = std::chrono::steady_clock::now();
  Result<Transaction> blocked = Transaction::begin(second, Transaction::Kind::kImmediate);
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), StatusCode::kTimeout) << blocked.status().message();
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  // Readers are not blocked by the writer (WAL).
  Result<Transaction> reader = Transaction::begin(second, Transaction::Kind::kRead);
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE(second.exec("SELECT count(*) FROM sqlite_schema").ok());
}

// Switching a file to WAL reads it first (shared lock), then needs it exclusively. While
// another connection holds the reserved lock (here a rollback-mode writer; in the field a
// second controller switching the same fresh state.db), SQLite answers SQLITE_BUSY at once
// instead of calling the busy handler, since waiting could deadlock. open() must retry.
TEST(SqliteDbTest, OpenWaitsForAWriterBeforeSwitchingToWal) {
  TempDir dir;
  const std::string path = dir.file("fresh.db");
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  // Its COMMIT needs the file to itself, so it waits out the shared lock each of open()'s
  // tries holds for a moment, as a controller's writer would (without a busy handler, a
  // COMMIT that met one failed, kept the lock, and open() timed out).
  sqlite3_busy_timeout(writer, 10'000);
  ASSERT_EQ(sqlite3_exec(writer, "CREATE TABLE t (x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);  // rollback-journal mode, reserved lock held until COMMIT
  // The flag is raised before the lock goes, so an open that really waited for the lock
  // always sees it raised; one that did not wait returns while it is still down.
  std::atomic<bool> releasing{false};
  int committed = SQLITE_ERROR;
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    releasing = true;
    committed = sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr);
  });
  Result<SqliteDb> db = SqliteDb::open(path, {.busy_timeout_ms = 10'000});
  const bool released_before_open_returned = releasing;
  release.join();
  sqlite3_close(writer);
  EXPECT_EQ(committed, SQLITE_OK);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_TRUE(released_before_open_returned);
  EXPECT_EQ(pragma(*db, "journal_mode"), "wal");
}

TEST(SqliteDbTest, ConcurrentOpensOfAFreshFileAllSucceed) {
  TempDir dir;
  for (int round = 0; round < 20; ++round) {
    const std::string path = dir.file("fresh" + std::to_string(round) + ".db");
    std::vector<common::Status> results(6);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < results.size(); ++i) {
      threads.emplace_back([&, i] {
        Result<SqliteDb> db = SqliteDb::open(path, {.busy_timeout_ms = 20'000});
        results[i] = db.status();
      });
    }
    for (std::thread& t : threads) t.join();
    for (const common::Status& s : results) {
      ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.message();
    }
  }
}

TEST(SqliteDbTest, RefusesASymlinkedDatabase) {
  TempDir dir;
  { SqliteDb real = openSqliteOk(dir.file("real.db")); }
  std::filesystem::create_symlink(dir.file("real.db"), dir.file("link.db"));
  Result<SqliteDb> db = SqliteDb::open(dir.file("link.db"));
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kIoError) << db.status().message();
}

TEST(SqliteDbTest, RefusesAFileThatIsNotADatabase) {
  TempDir dir;
  std::ofstream(dir.file("junk.db")) << std::string(4096, 'x');
  Result<SqliteDb> db = SqliteDb::open(dir.file("junk.db"));
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kIoError);
  EXPECT_NE(db.status().message().find("junk.db"), std::string::npos) << db.status().message();
}

TEST(SqliteDbTest, MissingDirectoryIsAnError) {
  TempDir dir;
  Result<SqliteDb> db = SqliteDb::open(dir.file("no/such/dir/t.db"));
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("no/such/dir/t.db"), std::string::npos)
      << db.status().message();
}

// Workers are spawned by the controller: none may inherit a descriptor of state.db.
TEST(SqliteDbTest, DatabaseDescriptorsAreCloseOnExec) {
  TempDir dir;
  SqliteDb db = openSqliteOk(dir.file("t.db"));
  ASSERT_TRUE(db.exec("CREATE TABLE t (v); INSERT INTO t VALUES (1)").ok());
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    std::filesystem::path target = std::filesystem::read_symlink(entry.path(), ec);
    if (ec || target.string().rfind(dir.path(), 0) != 0) continue;
    int fd = std::stoi(entry.path().filename().string());
    ++seen;
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC) << target;
  }
  EXPECT_GE(seen, 2);  // the DB and its WAL (and -shm)
}

}  // namespace
}  // namespace scalws::controller::state
