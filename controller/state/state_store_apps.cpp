// StateStore: the apps the controller runs. Policies in state_store.h.
#include "controller/state/state_store_impl.h"

namespace scalws::controller::state {

using namespace store_impl;

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
  SCALWS_ASSIGN_OR_RETURN(
      std::optional<AppRecord> app,
      readFirstRow(
          db_.query("SELECT " + std::string(kAppColumns) + " FROM apps WHERE name = ?1", name),
          readAppRow));
  if (!app) return appNotFound(name);
  return std::move(*app);
}

Result<std::vector<AppRecord>> StateStore::listApps() {
  return readRows(db_.query("SELECT " + std::string(kAppColumns) + " FROM apps ORDER BY name"),
                  readAppRow);
}

Result<AppRecord> StateStore::addApp(const AppRecord& app) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  Result<AppRecord> existing = getApp(app.name);
  if (existing.ok()) {
    return Status(StatusCode::kAlreadyExists, "app '" + app.name + "' already exists");
  }
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  AppRecord record = app;
  record.instance.reset();
  record.assigned_as.clear();
  record.created_ms = record.updated_ms = now();
  SCALWS_RETURN_IF_ERROR(db_.run(
      "INSERT INTO apps (" + std::string(kAppColumns) + ") VALUES (?1, ?2, NULL, NULL, ?3, ?4)",
      record.name, record.spec, record.created_ms, record.updated_ms));
  SCALWS_RETURN_IF_ERROR(noteEvent(std::nullopt, "app.added", "app " + record.name + " added"));
  SCALWS_RETURN_IF_ERROR(txn.commit());
  return record;
}

Status StateStore::removeApp(const std::string& name) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(AppRecord app, getApp(name));
  if (app.instance) {
    return Status(StatusCode::kFailedPrecondition, "app '" + name + "' is assigned to instance '" +
                                                       *app.instance + "'; release it first");
  }
  SCALWS_RETURN_IF_ERROR(db_.run("DELETE FROM apps WHERE name = ?1", name));
  SCALWS_RETURN_IF_ERROR(noteEvent(std::nullopt, "app.removed", "app " + name + " removed"));
  return txn.commit();
}

Status StateStore::assignApp(const std::string& name, const std::string& instance,
                             const std::string& as_given) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(AppRecord app, getApp(name));
  SCALWS_RETURN_IF_ERROR(requireInstance(instance));
  std::string as = as_given.empty() ? name : as_given;
  if (app.instance && *app.instance != instance) {
    return Status(StatusCode::kFailedPrecondition, "app '" + name + "' is assigned to instance '" +
                                                       *app.instance + "'; release it first");
  }
  SCALWS_ASSIGN_OR_RETURN(
      std::optional<std::string> taken,
      readFirstRow(
          db_.query("SELECT name FROM apps WHERE instance = ?1 AND assigned_as = ?2 AND name <> ?3",
                    instance, as, name),
          firstColumnText));
  if (taken) {
    return Status(StatusCode::kAlreadyExists,
                  "instance '" + instance + "' already has app '" + *taken + "' as '" + as + "'");
  }
  SCALWS_RETURN_IF_ERROR(
      db_.run("UPDATE apps SET instance = ?2, assigned_as = ?3, updated_ms = ?4 WHERE name = ?1",
              name, instance, as, now()));
  SCALWS_RETURN_IF_ERROR(noteEvent(instance, "app.assigned", "app " + name + " assigned as " + as));
  return txn.commit();
}

Status StateStore::releaseApp(const std::string& name) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(AppRecord app, getApp(name));
  if (!app.instance) return Status();
  SCALWS_RETURN_IF_ERROR(db_.run(
      "UPDATE apps SET instance = NULL, assigned_as = NULL, updated_ms = ?2 WHERE name = ?1", name,
      now()));
  SCALWS_RETURN_IF_ERROR(noteEvent(app.instance, "app.released", "app " + name + " released"));
  return txn.commit();
}

}  // namespace scalws::controller::state
