// StateStore: the live worker processes (migration 3), kept so a controller that restarts
// can find and re-attach the workers its predecessor left serving.
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
      "started_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(record.pid, record.instance, int64_t{record.slot},
                                       static_cast<int64_t>(record.start_ticks),
                                       record.attach_address, record.started_ms));
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
      "SELECT pid, instance, slot, start_ticks, attach_address, started_ms FROM workers";
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
    out.push_back(std::move(r));
  }
}

}  // namespace scalws::controller::state
