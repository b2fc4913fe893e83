// StateStore: PHP pools. Policies in state_store.h.
#include "controller/state/state_store.h"

namespace scalws::controller::state {

using common::Result;
using common::Status;
using common::StatusCode;
using Kind = Transaction::Kind;

namespace {

constexpr std::string_view kPoolColumns =
    "name, address, max_conns, managed, managed_user, processes, php_fpm_path, instance, "
    "created_ms, updated_ms, assigned_as";

PoolRecord readPoolRow(const Statement& stmt) {
  PoolRecord p;
  p.name = stmt.columnText(0);
  p.address = stmt.columnText(1);
  p.max_conns = static_cast<uint32_t>(stmt.columnInt(2));
  p.managed = stmt.columnInt(3) != 0;
  p.managed_user = stmt.columnText(4);
  p.processes = static_cast<uint32_t>(stmt.columnInt(5));
  p.php_fpm_path = stmt.columnText(6);
  p.instance = stmt.columnOptionalText(7);
  p.created_ms = stmt.columnInt(8);
  p.updated_ms = stmt.columnInt(9);
  if (p.instance) {
    std::optional<std::string> as = stmt.columnOptionalText(10);
    p.assigned_as = as ? *as : p.name;
  }
  return p;
}

Status poolNotFound(const std::string& name) {
  return common::notFound("no PHP pool named '" + name + "'");
}

}  // namespace

Result<std::optional<PoolRecord>> StateStore::readPool(const std::string& name) {
  Result<Statement> stmt =
      db_.prepare("SELECT " + std::string(kPoolColumns) + " FROM php_pools WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bind(1, name));
  Result<bool> row = stmt->step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<PoolRecord>();
  return std::optional<PoolRecord>(readPoolRow(*stmt));
}

Result<PoolRecord> StateStore::addPool(const PoolRecord& pool) {
  SCALWS_RETURN_IF_ERROR(validatePool(pool));
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<std::optional<PoolRecord>> existing = readPool(pool.name);
  if (!existing.ok()) return existing.status();
  if (existing->has_value()) {
    return Status(StatusCode::kAlreadyExists, "PHP pool '" + pool.name + "' already exists");
  }
  PoolRecord record = pool;
  std::optional<std::string> as;
  if (record.instance) {
    SCALWS_RETURN_IF_ERROR(requireInstance(*record.instance));
    if (record.assigned_as.empty()) record.assigned_as = record.name;
    Result<std::optional<std::string>> holder = poolBoundAs(*record.instance, record.assigned_as);
    if (!holder.ok()) return holder.status();
    if (holder->has_value()) {
      return Status(StatusCode::kAlreadyExists, "instance '" + *record.instance +
                                                    "' already has pool '" + **holder + "' as '" +
                                                    record.assigned_as + "'");
    }
    as = record.assigned_as;
  } else {
    record.assigned_as.clear();
  }
  record.created_ms = record.updated_ms = now();
  Result<Statement> insert = db_.prepare("INSERT INTO php_pools (" + std::string(kPoolColumns) +
                                         ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  if (!insert.ok()) return insert.status();
  SCALWS_RETURN_IF_ERROR(insert->bindAll(
      record.name, record.address, int64_t{record.max_conns}, int64_t{record.managed},
      record.managed_user, int64_t{record.processes}, record.php_fpm_path, record.instance,
      record.created_ms, record.updated_ms, as));
  SCALWS_RETURN_IF_ERROR(insert->run());
  std::string what = record.managed ? "managed, " + std::to_string(record.processes) +
                                          " process(es) as " + record.managed_user
                                    : "external";
  Result<EventRecord> added =
      insertEvent(record.instance, kEventPoolAdded,
                  "pool " + record.name + " added at " + record.address + " (" + what + ")");
  if (!added.ok()) return added.status();
  if (record.instance) {
    Result<EventRecord> assigned =
        insertEvent(record.instance, kEventPoolAssigned,
                    "pool " + record.name + " assigned as " + record.assigned_as);
    if (!assigned.ok()) return assigned.status();
  }
  SCALWS_RETURN_IF_ERROR(txn->commit());
  return record;
}

Status StateStore::removePool(const std::string& name) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<std::optional<PoolRecord>> pool = readPool(name);
  if (!pool.ok()) return pool.status();
  if (!pool->has_value()) return poolNotFound(name);
  if ((*pool)->instance) {
    return Status(StatusCode::kFailedPrecondition, "PHP pool '" + name +
                                                       "' is assigned to instance '" +
                                                       *(*pool)->instance + "'; release it first");
  }
  Result<Statement> del = db_.prepare("DELETE FROM php_pools WHERE name = ?1");
  if (!del.ok()) return del.status();
  SCALWS_RETURN_IF_ERROR(del->bind(1, name));
  SCALWS_RETURN_IF_ERROR(del->run());
  Result<EventRecord> event =
      insertEvent(std::nullopt, kEventPoolRemoved, "pool " + name + " removed");
  if (!event.ok()) return event.status();
  return txn->commit();
}

Result<std::optional<std::string>> StateStore::poolBoundAs(const std::string& instance,
                                                           const std::string& as) {
  Result<Statement> stmt =
      db_.prepare("SELECT name FROM php_pools WHERE instance = ?1 AND assigned_as = ?2");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(instance, as));
  Result<bool> row = stmt->step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(stmt->columnText(0));
}

Status StateStore::assignPool(const std::string& pool_name, const std::string& instance,
                              const std::string& as_name, std::optional<std::string>* replaced) {
  if (replaced != nullptr) replaced->reset();
  std::string as = as_name.empty() ? pool_name : as_name;
  SCALWS_RETURN_IF_ERROR(validateName("pool", as));
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<std::optional<PoolRecord>> pool = readPool(pool_name);
  if (!pool.ok()) return pool.status();
  if (!pool->has_value()) return poolNotFound(pool_name);
  SCALWS_RETURN_IF_ERROR(requireInstance(instance));
  const std::optional<std::string>& current = (*pool)->instance;
  if (current && *current == instance && (*pool)->assigned_as == as) return Status();  // already so
  if (current && *current != instance) {
    return Status(StatusCode::kFailedPrecondition, "PHP pool '" + pool_name +
                                                       "' is assigned to instance '" + *current +
                                                       "'; release it from there first");
  }
  // The pool that held the name on this instance gives it up, in the same transaction.
  Result<std::optional<std::string>> holder = poolBoundAs(instance, as);
  if (!holder.ok()) return holder.status();
  int64_t at = now();
  if (holder->has_value()) {
    Result<Statement> release = db_.prepare(
        "UPDATE php_pools SET instance = NULL, assigned_as = NULL, updated_ms = ?2 "
        "WHERE name = ?1");
    if (!release.ok()) return release.status();
    SCALWS_RETURN_IF_ERROR(release->bindAll(**holder, at));
    SCALWS_RETURN_IF_ERROR(release->run());
    Result<EventRecord> event =
        insertEvent(instance, kEventPoolReleased,
                    "pool " + **holder + " released (replaced by " + pool_name + " as " + as + ")");
    if (!event.ok()) return event.status();
  }
  Result<Statement> stmt = db_.prepare(
      "UPDATE php_pools SET instance = ?2, assigned_as = ?3, updated_ms = ?4 WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(pool_name, instance, as, at));
  SCALWS_RETURN_IF_ERROR(stmt->run());
  Result<EventRecord> event =
      insertEvent(instance, kEventPoolAssigned, "pool " + pool_name + " assigned as " + as);
  if (!event.ok()) return event.status();
  SCALWS_RETURN_IF_ERROR(txn->commit());
  if (replaced != nullptr) *replaced = *holder;
  return Status();
}

Status StateStore::releasePool(const std::string& pool_name) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<std::optional<PoolRecord>> pool = readPool(pool_name);
  if (!pool.ok()) return pool.status();
  if (!pool->has_value()) return poolNotFound(pool_name);
  std::optional<std::string> owner = (*pool)->instance;
  if (!owner) return Status();  // already unassigned
  Result<Statement> stmt = db_.prepare(
      "UPDATE php_pools SET instance = NULL, assigned_as = NULL, updated_ms = ?2 "
      "WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(pool_name, now()));
  SCALWS_RETURN_IF_ERROR(stmt->run());
  Result<EventRecord> event =
      insertEvent(owner, kEventPoolReleased, "pool " + pool_name + " released");
  if (!event.ok()) return event.status();
  return txn->commit();
}

Result<PoolRecord> StateStore::getPool(const std::string& name) {
  Result<std::optional<PoolRecord>> pool = readPool(name);
  if (!pool.ok()) return pool.status();
  if (!pool->has_value()) return poolNotFound(name);
  return std::move(**pool);
}

Result<std::vector<PoolRecord>> StateStore::listPools() {
  Result<Statement> stmt =
      db_.prepare("SELECT " + std::string(kPoolColumns) + " FROM php_pools ORDER BY name");
  if (!stmt.ok()) return stmt.status();
  std::vector<PoolRecord> out;
  while (true) {
    Result<bool> row = stmt->step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(readPoolRow(*stmt));
  }
}

}  // namespace scalws::controller::state
