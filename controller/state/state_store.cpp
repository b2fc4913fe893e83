// StateStore: opening, instances, CPU assignments and the event helpers. Pools are in
// state_store_pools.cpp, events and metrics in state_store_history.cpp.
#include "controller/state/state_store.h"

#include <chrono>
#include <map>

#include "controller/state/migrations.h"

namespace scalws::controller::state {

using common::Result;
using common::Status;
using common::StatusCode;
using Kind = Transaction::Kind;

namespace {

constexpr std::string_view kInstanceColumns =
    "name, mode, cpus, shared_cpus, user, config, config_path, desired_state, status, "
    "status_reason, created_ms, updated_ms, user_created";

Status corrupt(const std::string& what) {
  return Status(StatusCode::kIoError, "state DB holds an impossible value: " + what);
}

Result<InstanceRecord> readInstanceRow(const Statement& stmt) {
  InstanceRecord r;
  r.name = stmt.columnText(0);
  Result<WorkerMode> mode = parseWorkerMode(stmt.columnText(1));
  if (!mode.ok()) return corrupt("instance " + r.name + ": " + mode.status().message());
  r.mode = *mode;
  r.cpus = static_cast<uint32_t>(stmt.columnInt(2));
  r.shared_cpus = stmt.columnInt(3) != 0;
  r.user = stmt.columnText(4);
  r.config = stmt.columnText(5);
  r.config_path = stmt.columnText(6);
  Result<DesiredState> desired = parseDesiredState(stmt.columnText(7));
  if (!desired.ok()) return corrupt("instance " + r.name + ": " + desired.status().message());
  r.desired = *desired;
  r.status = stmt.columnText(8);
  r.status_reason = stmt.columnText(9);
  r.created_ms = stmt.columnInt(10);
  r.updated_ms = stmt.columnInt(11);
  r.user_created = stmt.columnInt(12) != 0;
  return r;
}

Status instanceNotFound(const std::string& name) {
  return common::notFound("no instance named '" + name + "'");
}

}  // namespace

std::string StateStore::dbPath(const std::string& state_dir) {
  return state_dir + "/state.db";
}

Result<StateStore> StateStore::open(const std::string& db_path, cpu::CpuAllocator allocator,
                                    Options options) {
  Result<SqliteDb> db = SqliteDb::open(db_path, {.busy_timeout_ms = options.busy_timeout_ms});
  if (!db.ok()) return db.status();
  SCALWS_RETURN_IF_ERROR(migrate(*db));
  Clock clock = options.clock;
  if (!clock) {
    clock = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  return StateStore(std::move(*db), std::move(allocator), std::move(clock));
}

// --- helpers (inside a transaction) ------------------------------------------------------

Result<EventRecord> StateStore::insertEvent(const std::optional<std::string>& instance,
                                            std::string_view kind, std::string_view message) {
  EventRecord event{0, now(), instance, std::string(kind), std::string(message)};
  Result<Statement> stmt =
      db_.prepare("INSERT INTO events (time_ms, instance, kind, message) VALUES (?1, ?2, ?3, ?4)");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(event.time_ms, event.instance, event.kind, event.message));
  SCALWS_RETURN_IF_ERROR(stmt->run());
  event.id = db_.lastInsertRowid();
  return event;
}

Result<bool> StateStore::instanceExists(const std::string& name) {
  Result<Statement> stmt = db_.prepare("SELECT 1 FROM instances WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bind(1, name));
  return stmt->step();
}

Status StateStore::requireInstance(const std::string& name) {
  Result<bool> exists = instanceExists(name);
  if (!exists.ok()) return exists.status();
  return *exists ? Status() : instanceNotFound(name);
}

Result<std::vector<cpu::CpuAssignment>> StateStore::readAssignments(const std::string* instance) {
  Result<Statement> stmt =
      instance == nullptr
          ? db_.prepare("SELECT instance, cpu, shared FROM cpu_assignments ORDER BY cpu, instance")
          : db_.prepare(
                "SELECT instance, cpu, shared FROM cpu_assignments WHERE instance = ?1 "
                "ORDER BY cpu");
  if (!stmt.ok()) return stmt.status();
  if (instance != nullptr) SCALWS_RETURN_IF_ERROR(stmt->bind(1, *instance));
  std::vector<cpu::CpuAssignment> out;
  while (true) {
    Result<bool> row = stmt->step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(
        {stmt->columnText(0), static_cast<uint32_t>(stmt->columnInt(1)), stmt->columnInt(2) != 0});
  }
  return out;
}

// --- instances ---------------------------------------------------------------------------

Result<InstanceRecord> StateStore::addInstance(const NewInstance& spec) {
  SCALWS_RETURN_IF_ERROR(validateName("instance", spec.name));
  if (spec.user.empty()) {
    return common::invalidArgument("instance " + spec.name + ": a user is required");
  }
  if (spec.cpus == 0) {
    return common::invalidArgument("instance " + spec.name + ": needs at least 1 CPU");
  }
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();

  Result<bool> exists = instanceExists(spec.name);
  if (!exists.ok()) return exists.status();
  if (*exists) {
    return Status(StatusCode::kAlreadyExists, "instance '" + spec.name + "' already exists");
  }
  // The allocator sees the assignments as of this transaction, which holds the write
  // lock: nobody can take a CPU between this read and our commit.
  Result<std::vector<cpu::CpuAssignment>> existing = readAssignments(nullptr);
  if (!existing.ok()) return existing.status();
  Result<common::CpuSet> cpus = allocator_.allocate(spec.cpus, spec.shared_cpus, *existing);
  if (!cpus.ok()) {
    return Status(cpus.status().code(), "instance " + spec.name + ": " + cpus.status().message());
  }

  InstanceRecord record;
  record.name = spec.name;
  record.mode = spec.mode;
  record.cpus = spec.cpus;
  record.shared_cpus = spec.shared_cpus;
  record.user = spec.user;
  record.user_created = spec.user_created;
  record.config = spec.config;
  record.config_path = spec.config_path;
  record.desired = spec.desired;
  record.status = "stopped";
  record.created_ms = record.updated_ms = now();
  record.assigned_cpus = *cpus;

  Result<Statement> insert =
      db_.prepare("INSERT INTO instances (" + std::string(kInstanceColumns) +
                  ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  if (!insert.ok()) return insert.status();
  SCALWS_RETURN_IF_ERROR(
      insert->bindAll(record.name, workerModeName(record.mode), int64_t{record.cpus},
                      int64_t{record.shared_cpus}, record.user, record.config, record.config_path,
                      desiredStateName(record.desired), record.status, record.status_reason,
                      record.created_ms, record.updated_ms, int64_t{record.user_created}));
  SCALWS_RETURN_IF_ERROR(insert->run());

  Result<Statement> assign =
      db_.prepare("INSERT INTO cpu_assignments (instance, cpu, shared) VALUES (?1, ?2, ?3)");
  if (!assign.ok()) return assign.status();
  for (uint32_t cpu : record.assigned_cpus.ids()) {
    SCALWS_RETURN_IF_ERROR(assign->bindAll(record.name, int64_t{cpu}, int64_t{spec.shared_cpus}));
    SCALWS_RETURN_IF_ERROR(assign->run());
    SCALWS_RETURN_IF_ERROR(assign->reset());
  }
  Result<EventRecord> event =
      insertEvent(record.name, kEventInstanceAdded,
                  "added: mode " + std::string(workerModeName(record.mode)) + ", CPUs " +
                      record.assigned_cpus.toString() + (spec.shared_cpus ? " (shared)" : "") +
                      ", user " + record.user);
  if (!event.ok()) return event.status();
  SCALWS_RETURN_IF_ERROR(txn->commit());
  return record;
}

Status StateStore::setInstanceConfig(const std::string& name, const std::string& config,
                                     const std::string& config_path) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<Statement> stmt = db_.prepare(
      "UPDATE instances SET config = ?2, config_path = ?3, updated_ms = ?4 WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(name, config, config_path, now()));
  SCALWS_RETURN_IF_ERROR(stmt->run());
  if (db_.changes() == 0) return instanceNotFound(name);
  Result<EventRecord> event = insertEvent(
      name, kEventInstanceConfig,
      "config replaced" + (config_path.empty() ? std::string() : " from " + config_path));
  if (!event.ok()) return event.status();
  return txn->commit();
}

Status StateStore::setDesiredState(const std::string& name, DesiredState desired) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<Statement> read = db_.prepare("SELECT desired_state FROM instances WHERE name = ?1");
  if (!read.ok()) return read.status();
  SCALWS_RETURN_IF_ERROR(read->bind(1, name));
  Result<bool> row = read->step();
  if (!row.ok()) return row.status();
  if (!*row) return instanceNotFound(name);
  if (read->columnText(0) == desiredStateName(desired)) return Status();  // nothing to do
  read = Statement();
  Result<Statement> stmt =
      db_.prepare("UPDATE instances SET desired_state = ?2, updated_ms = ?3 WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(name, desiredStateName(desired), now()));
  SCALWS_RETURN_IF_ERROR(stmt->run());
  Result<EventRecord> event = insertEvent(
      name, kEventInstanceDesired, "desired state " + std::string(desiredStateName(desired)));
  if (!event.ok()) return event.status();
  return txn->commit();
}

Status StateStore::setStatus(const std::string& name, const std::string& status,
                             const std::string& reason) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  Result<Statement> read =
      db_.prepare("SELECT status, status_reason FROM instances WHERE name = ?1");
  if (!read.ok()) return read.status();
  SCALWS_RETURN_IF_ERROR(read->bind(1, name));
  Result<bool> row = read->step();
  if (!row.ok()) return row.status();
  if (!*row) return instanceNotFound(name);
  if (read->columnText(0) == status && read->columnText(1) == reason) return Status();
  read = Statement();
  Result<Statement> stmt = db_.prepare(
      "UPDATE instances SET status = ?2, status_reason = ?3, updated_ms = ?4 WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bindAll(name, status, reason, now()));
  SCALWS_RETURN_IF_ERROR(stmt->run());
  Result<EventRecord> event =
      insertEvent(name, kEventInstanceStatus, reason.empty() ? status : status + ": " + reason);
  if (!event.ok()) return event.status();
  return txn->commit();
}

Status StateStore::removeInstance(const std::string& name) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kImmediate);
  if (!txn.ok()) return txn.status();
  SCALWS_RETURN_IF_ERROR(requireInstance(name));
  // Pools are released by the foreign key (ON DELETE SET NULL); name them in the history.
  Result<Statement> pools =
      db_.prepare("SELECT name FROM php_pools WHERE instance = ?1 ORDER BY name");
  if (!pools.ok()) return pools.status();
  SCALWS_RETURN_IF_ERROR(pools->bind(1, name));
  std::vector<std::string> released;
  while (true) {
    Result<bool> row = pools->step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    released.push_back(pools->columnText(0));
  }
  pools = Statement();
  Result<Statement> del = db_.prepare("DELETE FROM instances WHERE name = ?1");
  if (!del.ok()) return del.status();
  SCALWS_RETURN_IF_ERROR(del->bind(1, name));
  SCALWS_RETURN_IF_ERROR(del->run());
  for (const std::string& pool : released) {
    Result<EventRecord> event =
        insertEvent(name, kEventPoolReleased, "pool " + pool + " released (instance removed)");
    if (!event.ok()) return event.status();
  }
  Result<EventRecord> event = insertEvent(name, kEventInstanceRemoved, "removed");
  if (!event.ok()) return event.status();
  return txn->commit();
}

Result<InstanceRecord> StateStore::getInstance(const std::string& name) {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kRead);
  if (!txn.ok()) return txn.status();
  Result<Statement> stmt =
      db_.prepare("SELECT " + std::string(kInstanceColumns) + " FROM instances WHERE name = ?1");
  if (!stmt.ok()) return stmt.status();
  SCALWS_RETURN_IF_ERROR(stmt->bind(1, name));
  Result<bool> row = stmt->step();
  if (!row.ok()) return row.status();
  if (!*row) return instanceNotFound(name);
  Result<InstanceRecord> record = readInstanceRow(*stmt);
  if (!record.ok()) return record.status();
  Result<std::vector<cpu::CpuAssignment>> cpus = readAssignments(&name);
  if (!cpus.ok()) return cpus.status();
  for (const cpu::CpuAssignment& a : *cpus) record->assigned_cpus.add(a.cpu);
  SCALWS_RETURN_IF_ERROR(txn->commit());
  return record;
}

Result<std::vector<InstanceRecord>> StateStore::listInstances() {
  Result<Transaction> txn = Transaction::begin(db_, Kind::kRead);
  if (!txn.ok()) return txn.status();
  Result<Statement> stmt =
      db_.prepare("SELECT " + std::string(kInstanceColumns) + " FROM instances ORDER BY name");
  if (!stmt.ok()) return stmt.status();
  std::vector<InstanceRecord> out;
  std::map<std::string, size_t> index;
  while (true) {
    Result<bool> row = stmt->step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    Result<InstanceRecord> record = readInstanceRow(*stmt);
    if (!record.ok()) return record.status();
    index[record->name] = out.size();
    out.push_back(std::move(*record));
  }
  Result<std::vector<cpu::CpuAssignment>> cpus = readAssignments(nullptr);
  if (!cpus.ok()) return cpus.status();
  for (const cpu::CpuAssignment& a : *cpus) {
    auto it = index.find(a.instance);
    if (it != index.end()) out[it->second].assigned_cpus.add(a.cpu);
  }
  SCALWS_RETURN_IF_ERROR(txn->commit());
  return out;
}

// --- CPUs --------------------------------------------------------------------------------

Result<std::vector<cpu::CpuAssignment>> StateStore::listCpuAssignments() {
  return readAssignments(nullptr);
}

Result<std::vector<cpu::CpuUsage>> StateStore::cpuUsage() {
  Result<std::vector<cpu::CpuAssignment>> assignments = readAssignments(nullptr);
  if (!assignments.ok()) return assignments.status();
  return allocator_.usage(*assignments);
}

}  // namespace scalws::controller::state
