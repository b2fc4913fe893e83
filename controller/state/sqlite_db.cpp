#include "controller/state/sqlite_db.h"

#include <sqlite3.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

namespace scalws::controller::state {

using common::Result;
using common::Status;
using common::StatusCode;

Status sqliteStatus(sqlite3* db, int rc, std::string_view what) {
  StatusCode code = StatusCode::kInternal;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      code = StatusCode::kTimeout;
      break;
    case SQLITE_CONSTRAINT:
      code = (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
                 ? StatusCode::kAlreadyExists
                 : StatusCode::kFailedPrecondition;
      break;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      code = StatusCode::kResourceExhausted;
      break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      code = StatusCode::kPermissionDenied;
      break;
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
      code = StatusCode::kIoError;
      break;
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      code = StatusCode::kInvalidArgument;
      break;
    default:
      break;
  }
  std::string message(what);
  message += ": ";
  // sqlite3_errmsg describes the connection's latest error, which is rc's unless the
  // caller passes an rc it got elsewhere; fall back to the generic text then.
  if (db != nullptr && sqlite3_extended_errcode(db) == rc) {
    message += sqlite3_errmsg(db);
    int sys = sqlite3_system_errno(db);
    int primary = rc & 0xff;
    // SQLITE_FULL ("database or disk is full") is SQLite's answer to a write that failed
    // with ENOSPC, and it keeps no errno for it: name the cause an operator can act on.
    if (primary == SQLITE_FULL && sys == 0) sys = ENOSPC;
    if ((primary == SQLITE_CANTOPEN || primary == SQLITE_FULL || primary == SQLITE_IOERR) &&
        sys != 0) {
      message += " (";
      message += std::strerror(sys);
      message += ")";
    }
  } else {
    message += sqlite3_errstr(rc);
  }
  return Status(code, std::move(message));
}

// --- Statement -------------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);  // no-op on nullptr
}

namespace {

Status bindResult(sqlite3_stmt* stmt, int rc, int index) {
  if (rc == SQLITE_OK) return Status();
  return sqliteStatus(sqlite3_db_handle(stmt), rc, "bind parameter " + std::to_string(index));
}

}  // namespace

Status Statement::bind(int index, int64_t value) {
  return bindResult(stmt_, sqlite3_bind_int64(stmt_, index, value), index);
}

Status Statement::bind(int index, std::string_view text) {
  return bindResult(
      stmt_,
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
}

Status Statement::bind(int index, const std::optional<std::string>& text) {
  if (!text) return bind(index, std::nullopt);
  return bind(index, std::string_view(*text));
}

Status Statement::bind(int index, std::nullopt_t) {
  return bindResult(stmt_, sqlite3_bind_null(stmt_, index), index);
}

Status Statement::bindBlob(int index, std::string_view bytes) {
  // A zero-length blob, not NULL, for an empty value: sqlite3_bind_blob64 with a null
  // pointer would bind NULL.
  static const char kEmpty = 0;
  const void* data = bytes.empty() ? &kEmpty : bytes.data();
  return bindResult(stmt_, sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_TRANSIENT),
                    index);
}

Result<bool> Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqliteStatus(sqlite3_db_handle(stmt_), rc, "sqlite step");
}

Status Statement::run() {
  while (true) {
    Result<bool> row = step();
    if (!row.ok()) return row.status();
    if (!*row) return Status();
  }
}

Status Statement::reset() {
  // sqlite3_reset repeats the last step's error; that one was already reported.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  return Status();
}

int64_t Statement::columnInt(int col) const {
  return sqlite3_column_int64(stmt_, col);
}

std::string Statement::columnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::optional<std::string> Statement::columnOptionalText(int col) const {
  if (columnIsNull(col)) return std::nullopt;
  return columnText(col);
}

std::string Statement::columnBlob(int col) const {
  const void* data = sqlite3_column_blob(stmt_, col);
  if (data == nullptr) return std::string();
  return std::string(static_cast<const char*>(data),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

bool Statement::columnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

// --- SqliteDb --------------------------------------------------------------------------

Result<SqliteDb> SqliteDb::open(const std::string& path, const Options& options) {
  SqliteDb db;
  db.path_ = path;
  int flags =
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE;
  int rc = sqlite3_open_v2(path.c_str(), &db.db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // db_ may be set even on failure and must be closed; the destructor does it.
    if (db.db_ == nullptr) return sqliteStatus(nullptr, rc, "open " + path);
    return sqliteStatus(db.db_, rc, "open " + path);
  }
  sqlite3_extended_result_codes(db.db_, 1);
  sqlite3_busy_timeout(db.db_, options.busy_timeout_ms);

  Result<std::string> mode = db.enableWal(options.busy_timeout_ms);
  if (!mode.ok()) return Status(mode.status().code(), path + ": " + mode.status().message());
  // journal_mode answers with the mode in force: a filesystem without shared memory or
  // locking support answers something else, and silently running without WAL would
  // change the crash guarantees the controller relies on.
  if (*mode != "wal") {
    return Status(StatusCode::kFailedPrecondition,
                  path + ": cannot use write-ahead logging (journal mode is '" + *mode +
                      "'); put the state directory on a local filesystem");
  }
  Status status = db.exec(
      "PRAGMA synchronous=FULL;"
      "PRAGMA foreign_keys=ON;"
      "PRAGMA trusted_schema=OFF;");
  if (!status.ok()) return Status(status.code(), path + ": " + status.message());
  return db;
}

Result<std::string> SqliteDb::enableWal(int busy_timeout_ms) {
  // Switching a new file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at
  // once, without calling the busy handler, when another connection is doing the same
  // (several controllers or test threads opening a fresh state.db). Retry until the busy
  // timeout has passed, as the busy handler would have.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  while (true) {
    Result<Statement> stmt = prepare("PRAGMA journal_mode=WAL");
    if (!stmt.ok()) return stmt.status();
    Result<bool> row = stmt->step();
    if (row.ok()) return *row ? stmt->columnText(0) : std::string();
    int rc = sqlite3_extended_errcode(db_);
    bool busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
    if (!busy || std::chrono::steady_clock::now() >= deadline) return row.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

SqliteDb::~SqliteDb() {
  // close_v2 defers the close until outstanding statements are finalized instead of
  // failing with SQLITE_BUSY and leaking the connection.
  sqlite3_close_v2(db_);
}

Status SqliteDb::exec(std::string_view sql) {
  std::string text(sql);  // sqlite3_exec wants a NUL-terminated string
  char* error = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);  // sqlite3_errmsg still holds the same text
  if (rc != SQLITE_OK) return sqliteStatus(db_, sqlite3_extended_errcode(db_), "sqlite exec");
  return Status();
}

Result<Statement> SqliteDb::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sqliteStatus(db_, rc, "prepare '" + std::string(sql.substr(0, 60)) + "'");
  }
  return Statement(stmt);
}

int64_t SqliteDb::lastInsertRowid() const {
  return sqlite3_last_insert_rowid(db_);
}

int64_t SqliteDb::changes() const {
  return sqlite3_changes64(db_);
}

bool SqliteDb::inTransaction() const {
  return db_ != nullptr && sqlite3_get_autocommit(db_) == 0;
}

// --- Transaction -----------------------------------------------------------------------

Result<Transaction> Transaction::begin(SqliteDb& db, Kind kind) {
  Status status = db.exec(kind == Kind::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  if (!status.ok()) return Status(status.code(), "begin transaction: " + status.message());
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  // A failed statement may already have ended the transaction (SQLite rolls back by
  // itself on some errors, e.g. SQLITE_FULL); ROLLBACK then would fail harmlessly.
  if (db_ != nullptr && db_->inTransaction()) (void)db_->exec("ROLLBACK");
}

Status Transaction::commit() {
  if (db_ == nullptr) return common::internalError("commit of a finished transaction");
  Status status = db_->exec("COMMIT");
  if (!status.ok()) return Status(status.code(), "commit: " + status.message());
  db_ = nullptr;
  return Status();
}

}  // namespace scalws::controller::state
