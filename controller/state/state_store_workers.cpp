// StateStore: the live worker processes (migration 3) and what they were told (migration
// 5), kept so a controller that restarts can find and re-attach the workers its
// predecessor left serving, and check them against what it told them.
#include "controller/state/state_store.h"

namespace scalws::controller::state {

using common::Result;
using common::Status;
using Kind = Transaction::Kind;

Status StateStore::recordWorker(const WorkerRecord& record) {
  if (record.pid <= 0) return common::invalidArgument("a worker needs a pid");
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  SCALWS_RETURN_IF_ERROR(requireInstance(record.instance));
  Result<Statement> stmt = db_.prepare(
      "INSERT OR REPLACE INTO workers (pid, instance, slot, start_ticks, attach_address, "
      "started_ms, launch_digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(
      record.pid, record.instance, int64_t{record.slot}, static_cast<int64_t>(record.start_ticks),
      record.attach_address, record.started_ms, record.launch_digest));
  SCALWS_RETURN_IF_ERROR(stmt->run());
  return txn->commit();
}

Status StateStore::forgetWorker(int64_t pid) {
  Result<Statement> stmt = db_.prepare("DELETE FROM workers WHERE pid = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bind(1, pid));
  return stmt->run();
}

Result<std::vector<WorkerRecord>> StateStore::listWorkers(
    const std::optional<std::string>& instance) {
  std::string sql =
      "SELECT pid, instance, slot, start_ticks, attach_address, started_ms, launch_digest "
      "FROM workers";
  if (instance) sql += " WHERE instance = ?1";
  sql += " ORDER BY instance, slot, pid";
  Result<Statement> stmt = db_.prepare(sql);
  if (!stmt.ok()) return stmt.status();
  if (instance) SCALWS_RETURN_IF_ERROR(stmt->bind(1, *instance));
  std::vector<WorkerRecord> out;
  while (true) {
    Result<bool> row = stmt->step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    WorkerRecord r;
    r.pid = stmt->columnInt(0);
    r.instance = stmt->columnText(1);
    r.slot = static_cast<uint32_t>(stmt->columnInt(2));
    r.start_ticks = static_cast<uint64_t>(stmt->columnInt(3));
    r.attach_address = stmt->columnText(4);
    r.started_ms = stmt->columnInt(5);
    r.launch_digest = stmt->columnText(6);
    out.push_back(std::move(r));
  }
}

Status StateStore::setWorkerDigest(int64_t pid, const std::string& launch_digest) {
  Result<Statement> stmt = db_.prepare("UPDATE workers SET launch_digest = ?2 WHERE pid = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(pid, launch_digest));
  return stmt->run();
}

Status StateStore::saveLaunch(const std::string& instance, const LaunchRecord& launch) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  SCALWS_RETURN_IF_ERROR(requireInstance(instance));
  Result<Statement> stmt = db_.prepare(
      "INSERT OR REPLACE INTO launches (instance, config, config_path, php_pools, updated_ms, "
      "apps) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!stmt.ok()) return stmt.status();
  std::string pools = ipc::phpPoolGrantsJson(launch.php_pools).dump();
  std::string apps = ipc::appGrantsJson(launch.apps).dump();
  SCALWS_RETURN_IF_ERROR(
      stmt->bindAll(instance, launch.config, launch.config_path, pools, clock_(), apps));
  SCALWS_RETURN_IF_ERROR(stmt->run());
  return txn->commit();
}

Result<std::optional<LaunchRecord>> StateStore::getLaunch(const std::string& instance) {
  Result<Statement> stmt = db_.prepare(
      "SELECT config, config_path, php_pools, updated_ms, apps FROM launches WHERE instance = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bind(1, instance));
  Result<bool> row = stmt->step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<LaunchRecord>();
  LaunchRecord launch;
  launch.config = stmt->columnText(0);
  launch.config_path = stmt->columnText(1);
  Result<std::vector<ipc::PhpPoolGrant>> pools = ipc::parsePhpPoolGrants(
      ipc::Json{{"php_pools", ipc::Json::parse(stmt->columnText(2), nullptr, false)}});
  if (!pools.ok()) {
    return Status(common::StatusCode::kIoError,
                  "launches row of " + instance + ": " + pools.status().message());
  }
  launch.php_pools = std::move(pools).value();
  launch.updated_ms = stmt->columnInt(3);
  Result<std::vector<ipc::AppGrant>> apps = ipc::parseAppGrants(
      ipc::Json{{"apps", ipc::Json::parse(stmt->columnText(4), nullptr, false)}});
  if (!apps.ok()) {
    return Status(common::StatusCode::kIoError,
                  "launches row of " + instance + ": " + apps.status().message());
  }
  launch.apps = std::move(apps).value();
  return std::optional<LaunchRecord>(std::move(launch));
}

}  // namespace scalws::controller::state
