// StateStore: the live worker processes (migration 3) and what they were told (migration
// 5), kept so a controller that restarts can find and re-attach the workers its
// predecessor left serving, and check them against what it told them; the same for the
// fronts of shared addresses (migration 11).
#include "controller/state/state_store_impl.h"

namespace scalws::controller::state {

using namespace store_impl;

namespace {

// The columns a worker's and a front's rows share: pid, slot, start_ticks, attach_address
// and started_ms at 0, 2, 3, 4 and 5 (column 1 is what the process serves).
template <typename Record>
void readProcessColumns(const Statement& row, Record& r) {
  r.pid = row.columnInt(0);
  r.slot = static_cast<uint32_t>(row.columnInt(2));
  r.start_ticks = static_cast<uint64_t>(row.columnInt(3));
  r.attach_address = row.columnText(4);
  r.started_ms = row.columnInt(5);
}

}  // namespace

Status StateStore::recordWorker(const WorkerRecord& record) {
  if (record.pid <= 0) return common::invalidArgument("a worker needs a pid");
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_RETURN_IF_ERROR(requireInstance(record.instance));
  SCALWS_RETURN_IF_ERROR(db_.run(
      "INSERT OR REPLACE INTO workers (pid, instance, slot, start_ticks, attach_address, "
      "started_ms, launch_digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
      record.pid, record.instance, int64_t{record.slot}, static_cast<int64_t>(record.start_ticks),
      record.attach_address, record.started_ms, record.launch_digest));
  return txn.commit();
}

Status StateStore::forgetWorker(int64_t pid) {
  return db_.run("DELETE FROM workers WHERE pid = ?1", pid);
}

Result<std::vector<WorkerRecord>> StateStore::listWorkers(
    const std::optional<std::string>& instance) {
  std::string sql =
      "SELECT pid, instance, slot, start_ticks, attach_address, started_ms, launch_digest "
      "FROM workers";
  if (instance) sql += " WHERE instance = ?1";
  sql += " ORDER BY instance, slot, pid";
  return readRows(instance ? db_.query(sql, *instance) : db_.query(sql), [](const Statement& row) {
    WorkerRecord r;
    readProcessColumns(row, r);
    r.instance = row.columnText(1);
    r.launch_digest = row.columnText(6);
    return r;
  });
}

Status StateStore::recordFront(const FrontRecord& record) {
  if (record.pid <= 0) return common::invalidArgument("a front needs a pid");
  return db_.run(
      "INSERT OR REPLACE INTO fronts (pid, address, slot, start_ticks, attach_address, "
      "started_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
      record.pid, record.address, int64_t{record.slot}, static_cast<int64_t>(record.start_ticks),
      record.attach_address, record.started_ms);
}

Status StateStore::forgetFront(int64_t pid) {
  return db_.run("DELETE FROM fronts WHERE pid = ?1", pid);
}

Result<std::vector<FrontRecord>> StateStore::listFronts() {
  return readRows(db_.query("SELECT pid, address, slot, start_ticks, attach_address, started_ms "
                            "FROM fronts ORDER BY address, slot, pid"),
                  [](const Statement& row) {
                    FrontRecord r;
                    readProcessColumns(row, r);
                    r.address = row.columnText(1);
                    return r;
                  });
}

Status StateStore::setWorkerDigest(int64_t pid, const std::string& launch_digest) {
  return db_.run("UPDATE workers SET launch_digest = ?2 WHERE pid = ?1", pid, launch_digest);
}

Status StateStore::saveLaunch(const std::string& instance, const LaunchRecord& launch) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_RETURN_IF_ERROR(requireInstance(instance));
  std::string pools = ipc::phpPoolGrantsJson(launch.php_pools).dump();
  std::string apps = ipc::appGrantsJson(launch.apps).dump();
  SCALWS_RETURN_IF_ERROR(
      db_.run("INSERT OR REPLACE INTO launches (instance, config, config_path, php_pools, "
              "updated_ms, apps) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
              instance, launch.config, launch.config_path, pools, clock_(), apps));
  return txn.commit();
}

Result<std::optional<LaunchRecord>> StateStore::getLaunch(const std::string& instance) {
  return readFirstRow(
      db_.query("SELECT config, config_path, php_pools, updated_ms, apps FROM launches "
                "WHERE instance = ?1",
                instance),
      [&instance](const Statement& row) -> Result<LaunchRecord> {
        LaunchRecord launch;
        launch.config = row.columnText(0);
        launch.config_path = row.columnText(1);
        Result<std::vector<ipc::PhpPoolGrant>> pools = ipc::parsePhpPoolGrants(
            ipc::Json{{"php_pools", ipc::Json::parse(row.columnText(2), nullptr, false)}});
        if (!pools.ok()) {
          return Status(common::StatusCode::kIoError,
                        "launches row of " + instance + ": " + pools.status().message());
        }
        launch.php_pools = std::move(pools).value();
        launch.updated_ms = row.columnInt(3);
        Result<std::vector<ipc::AppGrant>> apps = ipc::parseAppGrants(
            ipc::Json{{"apps", ipc::Json::parse(row.columnText(4), nullptr, false)}});
        if (!apps.ok()) {
          return Status(common::StatusCode::kIoError,
                        "launches row of " + instance + ": " + apps.status().message());
        }
        launch.apps = std::move(apps).value();
        return launch;
      });
}

}  // namespace scalws::controller::state
