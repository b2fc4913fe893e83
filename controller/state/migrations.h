// The state database's schema as an ordered list of forward migrations.
//
// Version N is reached by applying migrations 1..N in order, each in its own BEGIN
// IMMEDIATE transaction together with its row in `schema_version`, so a crash leaves the
// DB at some whole version and the next start goes on from there. Released migrations are
// never edited: a change to the schema is a new migration appended to the list.
//
// Opening a DB whose version is newer than the binary's last migration is refused (an
// older binary must not write tables it does not understand); so is a DB holding tables
// but no `schema_version` (not a ScalWS state DB).
#pragma once

#include <span>
#include <string_view>

#include "common/status.h"
#include "controller/state/sqlite_db.h"

namespace scalws::controller::state {

struct Migration {
  int version;               // 1, 2, 3, ... without gaps
  std::string_view summary;  // stored in schema_version, shown in logs
  std::string_view sql;      // one or more statements
};

// Every migration this binary knows, in order.
std::span<const Migration> allMigrations();

// The version a DB is at: 0 for a new (empty) DB.
common::Result<int> schemaVersion(SqliteDb& db);

// Brings `db` to the last version of `migrations` (which must be numbered 1..N). Safe to
// run from several connections at once: each step re-reads the version inside its
// transaction and skips what another connection already applied.
common::Status migrate(SqliteDb& db, std::span<const Migration> migrations);
inline common::Status migrate(SqliteDb& db) {
  return migrate(db, allMigrations());
}

}  // namespace scalws::controller::state
