// A thin RAII wrapper over the sqlite3 C API: a connection (SqliteDb), a prepared statement
// (Statement) and a transaction (Transaction). Every failure is a Status; no exceptions.
//
// Ownership: a SqliteDb owns its connection and is move-only; a Statement owns its
// sqlite3_stmt and must be destroyed before the SqliteDb it came from (they are always
// locals of one store operation). One connection is used by one thread at a time; give
// each thread its own SqliteDb (SQLite's own locking then serialises the writers).
//
// Connection settings (applied by open()):
//   - journal_mode=WAL: readers never block the writer and a crash mid-commit leaves the
//     previous state intact.
//   - synchronous=FULL: the WAL is fsync'd at every commit, so a transaction the controller
//     has acknowledged to an operator survives a power cut, not only a process crash (with
//     NORMAL, WAL commits since the last checkpoint may roll back after power loss). The cost
//     is one fsync per operator command and one per metrics batch (every 10 s): negligible.
//   - foreign_keys=ON (SQLite's default is off, per connection), a busy timeout so a
//     second writer waits instead of failing at once, extended result codes, and the
//     database file refused if it is a symlink (SQLITE_OPEN_NOFOLLOW).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace scalws::controller::state {

// A Status for an SQLite result code: "what: sqlite's message". BUSY/LOCKED → kTimeout,
// UNIQUE/PRIMARY KEY constraints → kAlreadyExists, other constraints (foreign key, CHECK,
// triggers) → kFailedPrecondition, FULL/NOMEM → kResourceExhausted, READONLY/PERM →
// kPermissionDenied, I/O, corrupt and "not a database" → kIoError, otherwise kInternal.
common::Status sqliteStatus(sqlite3* db, int rc, std::string_view what);

class Statement {
 public:
  Statement() = default;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based. Text and blobs are copied into SQLite.
  common::Status bind(int index, int64_t value);
  common::Status bind(int index, std::string_view text);
  common::Status bind(int index, const std::string& text) {
    return bind(index, std::string_view(text));
  }
  common::Status bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  common::Status bind(int index, const std::optional<std::string>& text);  // NULL when empty
  common::Status bind(int index, std::nullopt_t);                          // NULL
  common::Status bindBlob(int index, std::string_view bytes);

  // Binds args to parameters 1..n in order.
  template <typename... Args>
  common::Status bindAll(const Args&... args) {
    int index = 0;
    common::Status status;
    ((status.ok() ? (void)(status = bind(++index, args)) : (void)0), ...);
    return status;
  }

  // Advances one row: true when a row is ready to read, false when the statement is done.
  common::Result<bool> step();
  // Runs a statement that returns no rows (INSERT/UPDATE/DELETE) to completion.
  common::Status run();
  // Makes the statement runnable again with new bindings (old ones cleared).
  common::Status reset();

  // Columns are 0-based, valid after step() returned true.
  int64_t columnInt(int col) const;
  std::string columnText(int col) const;  // "" for NULL
  std::optional<std::string> columnOptionalText(int col) const;
  std::string columnBlob(int col) const;
  bool columnIsNull(int col) const;

  sqlite3_stmt* handle() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  struct Options {
    int busy_timeout_ms = 5000;
  };

  // Opens (creating if missing) the database at `path` with the settings above.
  static common::Result<SqliteDb> open(const std::string& path, const Options& options);
  static common::Result<SqliteDb> open(const std::string& path) { return open(path, Options()); }

  SqliteDb() = default;
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  // Runs one or more ';'-separated statements without parameters, ignoring any rows.
  common::Status exec(std::string_view sql);
  common::Result<Statement> prepare(std::string_view sql);

  // prepare(sql) with args bound to ?1..?n in order.
  template <typename... Args>
  common::Result<Statement> query(std::string_view sql, const Args&... args) {
    SCALWS_ASSIGN_OR_RETURN(Statement stmt, prepare(sql));
    if constexpr (sizeof...(Args) > 0) SCALWS_RETURN_IF_ERROR(stmt.bindAll(args...));
    return stmt;
  }
  // query(sql, args...) run to completion, for a statement that returns no rows.
  template <typename... Args>
  common::Status run(std::string_view sql, const Args&... args) {
    SCALWS_ASSIGN_OR_RETURN(Statement stmt, query(sql, args...));
    return stmt.run();
  }

  int64_t lastInsertRowid() const;
  int64_t changes() const;  // rows changed by the last INSERT/UPDATE/DELETE
  bool inTransaction() const;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  // Sets journal_mode=WAL, retrying while busy; returns the mode now in force.
  common::Result<std::string> enableWal(int busy_timeout_ms);

  sqlite3* db_ = nullptr;
  std::string path_;
};

// BEGIN on construction, ROLLBACK on destruction unless commit() succeeded. Writers use
// kImmediate: the write lock is taken at BEGIN (waiting up to the busy timeout), so a
// read-then-write transaction can never fail half-way with SQLITE_BUSY, and what it read
// (e.g. the CPU assignments the allocator saw) cannot change before it commits.
class Transaction {
 public:
  enum class Kind { kRead, kImmediate };

  static common::Result<Transaction> begin(SqliteDb& db, Kind kind);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  common::Status commit();

 private:
  explicit Transaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_ = nullptr;  // null once committed or rolled back
};

}  // namespace scalws::controller::state
