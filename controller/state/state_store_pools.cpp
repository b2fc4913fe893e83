// StateStore: PHP pools. Policies in state_store.h.
#include "controller/state/state_store_impl.h"

namespace scalws::controller::state {

using namespace store_impl;

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
  return readFirstRow(
      db_.query("SELECT " + std::string(kPoolColumns) + " FROM php_pools WHERE name = ?1", name),
      readPoolRow);
}

Result<PoolRecord> StateStore::addPool(const PoolRecord& pool) {
  SCALWS_RETURN_IF_ERROR(validatePool(pool));
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(std::optional<PoolRecord> existing, readPool(pool.name));
  if (existing) {
    return Status(StatusCode::kAlreadyExists, "PHP pool '" + pool.name + "' already exists");
  }
  PoolRecord record = pool;
  std::optional<std::string> as;
  if (record.instance) {
    SCALWS_RETURN_IF_ERROR(requireInstance(*record.instance));
    if (record.assigned_as.empty()) record.assigned_as = record.name;
    SCALWS_ASSIGN_OR_RETURN(std::optional<std::string> holder,
                            poolBoundAs(*record.instance, record.assigned_as));
    if (holder) {
      return Status(StatusCode::kAlreadyExists, "instance '" + *record.instance +
                                                    "' already has pool '" + *holder + "' as '" +
                                                    record.assigned_as + "'");
    }
    as = record.assigned_as;
  } else {
    record.assigned_as.clear();
  }
  record.created_ms = record.updated_ms = now();
  SCALWS_RETURN_IF_ERROR(db_.run("INSERT INTO php_pools (" + std::string(kPoolColumns) +
                                     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                                 record.name, record.address, int64_t{record.max_conns},
                                 int64_t{record.managed}, record.managed_user,
                                 int64_t{record.processes}, record.php_fpm_path, record.instance,
                                 record.created_ms, record.updated_ms, as));
  std::string what = record.managed ? "managed, " + std::to_string(record.processes) +
                                          " process(es) as " + record.managed_user
                                    : "external";
  SCALWS_RETURN_IF_ERROR(
      noteEvent(record.instance, kEventPoolAdded,
                "pool " + record.name + " added at " + record.address + " (" + what + ")"));
  if (record.instance) {
    SCALWS_RETURN_IF_ERROR(noteEvent(record.instance, kEventPoolAssigned,
                                     "pool " + record.name + " assigned as " + record.assigned_as));
  }
  SCALWS_RETURN_IF_ERROR(txn.commit());
  return record;
}

Status StateStore::removePool(const std::string& name) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(PoolRecord pool, getPool(name));
  if (pool.instance) {
    return Status(StatusCode::kFailedPrecondition, "PHP pool '" + name +
                                                       "' is assigned to instance '" +
                                                       *pool.instance + "'; release it first");
  }
  SCALWS_RETURN_IF_ERROR(db_.run("DELETE FROM php_pools WHERE name = ?1", name));
  SCALWS_RETURN_IF_ERROR(noteEvent(std::nullopt, kEventPoolRemoved, "pool " + name + " removed"));
  return txn.commit();
}

Result<std::optional<std::string>> StateStore::poolBoundAs(const std::string& instance,
                                                           const std::string& as) {
  return readFirstRow(
      db_.query("SELECT name FROM php_pools WHERE instance = ?1 AND assigned_as = ?2", instance,
                as),
      firstColumnText);
}

Status StateStore::assignPool(const std::string& pool_name, const std::string& instance,
                              const std::string& as_name, std::optional<std::string>* replaced) {
  if (replaced != nullptr) replaced->reset();
  std::string as = as_name.empty() ? pool_name : as_name;
  SCALWS_RETURN_IF_ERROR(validateName("pool", as));
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(PoolRecord pool, getPool(pool_name));
  SCALWS_RETURN_IF_ERROR(requireInstance(instance));
  const std::optional<std::string>& current = pool.instance;
  if (current && *current == instance && pool.assigned_as == as) return Status();  // already so
  if (current && *current != instance) {
    return Status(StatusCode::kFailedPrecondition, "PHP pool '" + pool_name +
                                                       "' is assigned to instance '" + *current +
                                                       "'; release it from there first");
  }
  // The pool that held the name on this instance gives it up, in the same transaction.
  SCALWS_ASSIGN_OR_RETURN(std::optional<std::string> holder, poolBoundAs(instance, as));
  int64_t at = now();
  if (holder) {
    SCALWS_RETURN_IF_ERROR(unassignPool(*holder, at));
    SCALWS_RETURN_IF_ERROR(
        noteEvent(instance, kEventPoolReleased,
                  "pool " + *holder + " released (replaced by " + pool_name + " as " + as + ")"));
  }
  SCALWS_RETURN_IF_ERROR(db_.run(
      "UPDATE php_pools SET instance = ?2, assigned_as = ?3, updated_ms = ?4 WHERE name = ?1",
      pool_name, instance, as, at));
  SCALWS_RETURN_IF_ERROR(
      noteEvent(instance, kEventPoolAssigned, "pool " + pool_name + " assigned as " + as));
  SCALWS_RETURN_IF_ERROR(txn.commit());
  if (replaced != nullptr) *replaced = holder;
  return Status();
}

Status StateStore::releasePool(const std::string& pool_name) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(PoolRecord pool, getPool(pool_name));
  std::optional<std::string> owner = pool.instance;
  if (!owner) return Status();  // already unassigned
  SCALWS_RETURN_IF_ERROR(unassignPool(pool_name, now()));
  SCALWS_RETURN_IF_ERROR(noteEvent(owner, kEventPoolReleased, "pool " + pool_name + " released"));
  return txn.commit();
}

Status StateStore::unassignPool(const std::string& pool_name, int64_t at) {
  return db_.run(
      "UPDATE php_pools SET instance = NULL, assigned_as = NULL, updated_ms = ?2 WHERE name = ?1",
      pool_name, at);
}

Result<PoolRecord> StateStore::getPool(const std::string& name) {
  SCALWS_ASSIGN_OR_RETURN(std::optional<PoolRecord> pool, readPool(name));
  if (!pool) return poolNotFound(name);
  return std::move(*pool);
}

Result<std::vector<PoolRecord>> StateStore::listPools() {
  return readRows(
      db_.query("SELECT " + std::string(kPoolColumns) + " FROM php_pools ORDER BY name"),
      readPoolRow);
}

}  // namespace scalws::controller::state
