#include "controller/state/migrations.h"

#include <string>

#include "common/log.h"

namespace scalws::controller::state {

using common::Result;
using common::Status;
using common::StatusCode;

namespace {

constexpr std::string_view kCreateVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY NOT NULL,"
    " summary TEXT NOT NULL,"
    " applied_ms INTEGER NOT NULL"
    ") STRICT";

Result<bool> tableExists(SqliteDb& db, std::string_view name) {
  Result<Statement> stmt =
      db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bind(1, name));
  return stmt->step();
}

Result<int64_t> userTableCount(SqliteDb& db) {
  Result<Statement> stmt = db.prepare(
      "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
      "ESCAPE '\\'");
  if (!stmt.ok()) return stmt.status();
  Result<bool> row = stmt->step();
  if (!row.ok()) return row.status();
  return stmt->columnInt(0);
}

Status tooNew(const SqliteDb& db, int current, int latest) {
  return Status(StatusCode::kFailedPrecondition,
                db.path() + " has schema version " + std::to_string(current) +
                    " but this scalws-controller knows versions up to " + std::to_string(latest) +
                    "; run the newer scalws-controller that wrote it (or restore a backup)");
}

Status checkList(std::span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return common::internalError("migration list is not numbered 1..N (entry " +
                                   std::to_string(i) + " has version " +
                                   std::to_string(migrations[i].version) + ")");
    }
  }
  return Status();
}

// Applies migration m unless the DB is already at or past it; one transaction.
Status applyOne(SqliteDb& db, const Migration& m, int latest) {
  Result<Transaction> txn = Transaction::begin(db, Transaction::Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<bool> has_table = tableExists(db, "schema_version");
  if (!has_table.ok()) return has_table.status();
  if (!*has_table) {
    Result<int64_t> tables = userTableCount(db);
    if (!tables.ok()) return tables.status();
    if (*tables > 0) {
      return Status(StatusCode::kFailedPrecondition,
                    db.path() +
                        " is not a ScalWS state database (it has tables but no "
                        "schema_version); refusing to touch it");
    }
    SCALWS_RETURN_IF_ERROR(db.exec(kCreateVersionTable));
  }
  Result<int> current = schemaVersion(db);
  if (!current.ok()) return current.status();
  if (*current > latest) {
    return tooNew(db, *current, latest);
  }
  if (*current >= m.version) return Status();  // another connection got here first
  if (*current != m.version - 1) {
    return common::internalError("schema version " + std::to_string(*current) +
                                 " cannot take migration " + std::to_string(m.version));
  }
  Status status = db.exec(m.sql);
  if (!status.ok()) {
    return Status(status.code(), "migration " + std::to_string(m.version) + " (" +
                                     std::string(m.summary) + "): " + status.message());
  }
  Result<Statement> record = db.prepare(
      "INSERT INTO schema_version (version, summary, applied_ms) "
      "VALUES (?1, ?2, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))");
  if (!record.ok()) return record.status();
  SCALWS_RETURN_IF_ERROR(record->bindAll(int64_t{m.version}, m.summary));
  SCALWS_RETURN_IF_ERROR(record->run());
  record = Statement();
  SCALWS_RETURN_IF_ERROR(txn->commit());
  LOG_INFO("%s: applied schema migration %d (%.*s)", db.path().c_str(), m.version,
           static_cast<int>(m.summary.size()), m.summary.data());
  return Status();
}

}  // namespace

Result<int> schemaVersion(SqliteDb& db) {
  Result<bool> has_table = tableExists(db, "schema_version");
  if (!has_table.ok()) return has_table.status();
  if (!*has_table) return 0;
  Result<Statement> stmt = db.prepare("SELECT coalesce(max(version), 0) FROM schema_version");
  if (!stmt.ok()) return stmt.status();
  Result<bool> row = stmt->step();
  if (!row.ok()) return row.status();
  return static_cast<int>(stmt->columnInt(0));
}

Status migrate(SqliteDb& db, std::span<const Migration> migrations) {
  SCALWS_RETURN_IF_ERROR(checkList(migrations));
  int latest = static_cast<int>(migrations.size());
  // A DB already past this binary must be refused even when there is nothing to apply.
  Result<int> current = schemaVersion(db);
  if (!current.ok()) return current.status();
  if (*current > latest) {
    return tooNew(db, *current, latest);
  }
  for (const Migration& m : migrations) {
    if (m.version <= *current) continue;
    SCALWS_RETURN_IF_ERROR(applyOne(db, m, latest));
  }
  if (latest == 0) return Status();
  // The loop may have skipped everything; check the final answer once more.
  Result<int> final_version = schemaVersion(db);
  if (!final_version.ok()) return final_version.status();
  if (*final_version > latest) return tooNew(db, *final_version, latest);
  if (*final_version != latest) {
    return common::internalError("schema is at version " + std::to_string(*final_version) +
                                 " after migrating to " + std::to_string(latest));
  }
  return Status();
}

}  // namespace scalws::controller::state
