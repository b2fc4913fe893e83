// StateStore: the apps the controller runs. Policies in state_store.h.
#include "controller/state/state_store.h"

namespace scalws::controller::state {

using common::Result;
using common::Status;
using common::StatusCode;
using Kind = Transaction::Kind;

namespace {

constexpr std::string_view kAppColumns =
    "name, spec, instance, assigned_as, created_ms, updated_ms";

AppRecord readAppRow(const Statement& stmt) {
  AppRecord a;
  a.name = stmt.columnText(0);
  a.spec = stmt.columnText(1);
  a.instance = stmt.columnOptionalText(2);
  if (a.instance) a.assigned_as = stmt.columnOptionalText(3).value_or(a.name);
  a.created_ms = stmt.columnInt(4);
  a.updated_ms = stmt.columnInt(5);
  return a;
}

Status appNotFound(const std::string& name) {
  return common::notFound("no app named '" + name + "'");
}

}  // namespace

Result<AppRecord> StateStore::getApp(const std::string& name) {
  Result<Statement> stmt =
      db_.prepare("SELECT " + std::string(kAppColumns) + " FROM apps WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bind(1, name));
  Result<bool> row = stmt->step();
  if (!row.ok()) return row.status();
  if (!*row) return appNotFound(name);
  return readAppRow(*stmt);
}

Result<std::vector<AppRecord>> StateStore::listApps() {
  Result<Statement> stmt =
      db_.prepare("SELECT " + std::string(kAppColumns) + " FROM apps ORDER BY name");
  if (!stmt.ok()) return stmt.status();
  std::vector<AppRecord> out;
  while (true) {
    Result<bool> row = stmt->step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(readAppRow(*stmt));
  }
  return out;
}

Result<AppRecord> StateStore::addApp(const AppRecord& app) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<AppRecord> existing = getApp(app.name);
  if (existing.ok()) {
    return Status(StatusCode::kAlreadyExists, "app '" + app.name + "' already exists");
  }
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  AppRecord record = app;
  record.instance.reset();
  record.assigned_as.clear();
  record.created_ms = record.updated_ms = now();
  Result<Statement> insert = db_.prepare("INSERT INTO apps (" + std::string(kAppColumns) +
                                         ") VALUES (?1, ?2, NULL, NULL, ?3, ?4)");
  if (!insert.ok()) return insert.status();
  SCALWS_RETURN_IF_ERROR(
      insert->bindAll(record.name, record.spec, record.created_ms, record.updated_ms));
  SCALWS_RETURN_IF_ERROR(insert->run());
  Result<EventRecord> added =
      insertEvent(std::nullopt, "app.added", "app " + record.name + " added");
  if (!added.ok()) return added.status();
  SCALWS_RETURN_IF_ERROR(txn->commit());
  return record;
}

Status StateStore::removeApp(const std::string& name) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<AppRecord> app = getApp(name);
  if (!app.ok()) return app.status();
  if (app->instance) {
    return Status(StatusCode::kFailedPrecondition, "app '" + name + "' is assigned to instance '" +
                                                       *app->instance + "'; release it first");
  }
  Result<Statement> del = db_.prepare("DELETE FROM apps WHERE name = ?1");
  if (!del.ok()) return del.status();
  SCALWS_RETURN_IF_ERROR(del->bind(1, name));
  SCALWS_RETURN_IF_ERROR(del->run());
  Result<EventRecord> event = insertEvent(std::nullopt, "app.removed", "app " + name + " removed");
  if (!event.ok()) return event.status();
  return txn->commit();
}

Status StateStore::assignApp(const std::string& name, const std::string& instance,
                             const std::string& as_given) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<AppRecord> app = getApp(name);
  if (!app.ok()) return app.status();
  SCALWS_RETURN_IF_ERROR(requireInstance(instance));
  std::string as = as_given.empty() ? name : as_given;
  if (app->instance && *app->instance != instance) {
    return Status(StatusCode::kFailedPrecondition, "app '" + name + "' is assigned to instance '" +
                                                       *app->instance + "'; release it first");
  }
  Result<Statement> holder =
      db_.prepare("SELECT name FROM apps WHERE instance = ?1 AND assigned_as = ?2 AND name <> ?3");
  if (!holder.ok()) return holder.status();
  SCALWS_RETURN_IF_ERROR(holder->bindAll(instance, as, name));
  Result<bool> taken = holder->step();
  if (!taken.ok()) return taken.status();
  if (*taken) {
    return Status(StatusCode::kAlreadyExists, "instance '" + instance + "' already has app '" +
                                                  holder->columnText(0) + "' as '" + as + "'");
  }
  holder = Statement();
  Result<Statement> update = db_.prepare(
      "UPDATE apps SET instance = ?2, assigned_as = ?3, updated_ms = ?4 WHERE name = ?1");
  if (!update.ok()) return update.status();
  SCALWS_RETURN_IF_ERROR(update->bindAll(name, instance, as, now()));
  SCALWS_RETURN_IF_ERROR(update->run());
  Result<EventRecord> event =
      insertEvent(instance, "app.assigned", "app " + name + " assigned as " + as);
  if (!event.ok()) return event.status();
  return txn->commit();
}

Status StateStore::releaseApp(const std::string& name) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<AppRecord> app = getApp(name);
  if (!app.ok()) return app.status();
  if (!app->instance) return Status();
  Result<Statement> update = db_.prepare(
      "UPDATE apps SET instance = NULL, assigned_as = NULL, updated_ms = ?2 WHERE name = ?1");
  if (!update.ok()) return update.status();
  SCALWS_RETURN_IF_ERROR(update->bindAll(name, now()));
  SCALWS_RETURN_IF_ERROR(update->run());
  Result<EventRecord> event =
      insertEvent(app->instance, "app.released", "app " + name + " released");
  if (!event.ok()) return event.status();
  return txn->commit();
}

}  // namespace scalws::controller::state
