// StateStore: opening, instances, CPU assignments and the event helpers. Pools are in
// state_store_pools.cpp, events and metrics in state_store_history.cpp.
#include "controller/state/state_store.h"

#include <chrono>
#include <map>

#include "controller/state/migrations.h"
#include "controller/state/state_store_impl.h"

namespace scalws::controller::state {

using namespace store_impl;

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
  SCALWS_RETURN_IF_ERROR(
      db_.run("INSERT INTO events (time_ms, instance, kind, message) VALUES (?1, ?2, ?3, ?4)",
              event.time_ms, event.instance, event.kind, event.message));
  event.id = db_.lastInsertRowid();
  return event;
}

Status StateStore::noteEvent(const std::optional<std::string>& instance, std::string_view kind,
                             std::string_view message) {
  return insertEvent(instance, kind, message).status();
}

Result<bool> StateStore::instanceExists(const std::string& name) {
  SCALWS_ASSIGN_OR_RETURN(Statement stmt,
                          db_.query("SELECT 1 FROM instances WHERE name = ?1", name));
  return stmt.step();
}

Status StateStore::requireInstance(const std::string& name) {
  Result<bool> exists = instanceExists(name);
  if (!exists.ok()) return exists.status();
  return *exists ? Status() : instanceNotFound(name);
}

Result<std::vector<cpu::CpuAssignment>> StateStore::readAssignments(const std::string* instance) {
  Result<Statement> stmt =
      instance == nullptr
          ? db_.query("SELECT instance, cpu, shared FROM cpu_assignments ORDER BY cpu, instance")
          : db_.query(
                "SELECT instance, cpu, shared FROM cpu_assignments WHERE instance = ?1 "
                "ORDER BY cpu",
                *instance);
  if (!stmt.ok()) return stmt.status();
  return readRows(*stmt, [](const Statement& row) {
    return cpu::CpuAssignment{row.columnText(0), static_cast<uint32_t>(row.columnInt(1)),
                              row.columnInt(2) != 0};
  });
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
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());

  SCALWS_ASSIGN_OR_RETURN(bool exists, instanceExists(spec.name));
  if (exists) {
    return Status(StatusCode::kAlreadyExists, "instance '" + spec.name + "' already exists");
  }
  // The allocator sees the assignments as of this transaction, which holds the write
  // lock: nobody can take a CPU between this read and our commit.
  SCALWS_ASSIGN_OR_RETURN(std::vector<cpu::CpuAssignment> existing, readAssignments(nullptr));
  Result<common::CpuSet> cpus = allocator_.allocate(spec.cpus, spec.shared_cpus, existing);
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

  SCALWS_RETURN_IF_ERROR(
      db_.run("INSERT INTO instances (" + std::string(kInstanceColumns) +
                  ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
              record.name, workerModeName(record.mode), int64_t{record.cpus},
              int64_t{record.shared_cpus}, record.user, record.config, record.config_path,
              desiredStateName(record.desired), record.status, record.status_reason,
              record.created_ms, record.updated_ms, int64_t{record.user_created}));

  SCALWS_ASSIGN_OR_RETURN(
      Statement assign,
      db_.query("INSERT INTO cpu_assignments (instance, cpu, shared) VALUES (?1, ?2, ?3)"));
  for (uint32_t cpu : record.assigned_cpus.ids()) {
    SCALWS_RETURN_IF_ERROR(assign.bindAll(record.name, int64_t{cpu}, int64_t{spec.shared_cpus}));
    SCALWS_RETURN_IF_ERROR(assign.run());
    SCALWS_RETURN_IF_ERROR(assign.reset());
  }
  SCALWS_RETURN_IF_ERROR(noteEvent(record.name, kEventInstanceAdded,
                                   "added: mode " + std::string(workerModeName(record.mode)) +
                                       ", CPUs " + record.assigned_cpus.toString() +
                                       (spec.shared_cpus ? " (shared)" : "") + ", user " +
                                       record.user));
  SCALWS_RETURN_IF_ERROR(txn.commit());
  return record;
}

Status StateStore::setInstanceConfig(const std::string& name, const std::string& config,
                                     const std::string& config_path) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_RETURN_IF_ERROR(
      db_.run("UPDATE instances SET config = ?2, config_path = ?3, updated_ms = ?4 WHERE name = ?1",
              name, config, config_path, now()));
  if (db_.changes() == 0) return instanceNotFound(name);
  SCALWS_RETURN_IF_ERROR(noteEvent(
      name, kEventInstanceConfig,
      "config replaced" + (config_path.empty() ? std::string() : " from " + config_path)));
  return txn.commit();
}

Status StateStore::setDesiredState(const std::string& name, DesiredState desired) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(
      std::optional<std::string> current,
      readFirstRow(db_.query("SELECT desired_state FROM instances WHERE name = ?1", name),
                   firstColumnText));
  if (!current) return instanceNotFound(name);
  if (*current == desiredStateName(desired)) return Status();  // nothing to do
  SCALWS_RETURN_IF_ERROR(
      db_.run("UPDATE instances SET desired_state = ?2, updated_ms = ?3 WHERE name = ?1", name,
              desiredStateName(desired), now()));
  SCALWS_RETURN_IF_ERROR(noteEvent(name, kEventInstanceDesired,
                                   "desired state " + std::string(desiredStateName(desired))));
  return txn.commit();
}

Status StateStore::setStatus(const std::string& name, const std::string& status,
                             const std::string& reason) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_ASSIGN_OR_RETURN(
      std::optional<bool> same,
      readFirstRow(db_.query("SELECT status, status_reason FROM instances WHERE name = ?1", name),
                   [&](const Statement& row) {
                     return row.columnText(0) == status && row.columnText(1) == reason;
                   }));
  if (!same) return instanceNotFound(name);
  if (*same) return Status();
  SCALWS_RETURN_IF_ERROR(db_.run(
      "UPDATE instances SET status = ?2, status_reason = ?3, updated_ms = ?4 WHERE name = ?1", name,
      status, reason, now()));
  SCALWS_RETURN_IF_ERROR(
      noteEvent(name, kEventInstanceStatus, reason.empty() ? status : status + ": " + reason));
  return txn.commit();
}

Status StateStore::removeInstance(const std::string& name) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginWrite());
  SCALWS_RETURN_IF_ERROR(requireInstance(name));
  // Pools are released by the foreign key (ON DELETE SET NULL); name them in the history.
  SCALWS_ASSIGN_OR_RETURN(
      std::vector<std::string> released,
      readRows(db_.query("SELECT name FROM php_pools WHERE instance = ?1 ORDER BY name", name),
               firstColumnText));
  SCALWS_RETURN_IF_ERROR(db_.run("DELETE FROM instances WHERE name = ?1", name));
  for (const std::string& pool : released) {
    SCALWS_RETURN_IF_ERROR(
        noteEvent(name, kEventPoolReleased, "pool " + pool + " released (instance removed)"));
  }
  SCALWS_RETURN_IF_ERROR(noteEvent(name, kEventInstanceRemoved, "removed"));
  return txn.commit();
}

Result<InstanceRecord> StateStore::getInstance(const std::string& name) {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginRead());
  SCALWS_ASSIGN_OR_RETURN(std::optional<InstanceRecord> record,
                          readFirstRow(db_.query("SELECT " + std::string(kInstanceColumns) +
                                                     " FROM instances WHERE name = ?1",
                                                 name),
                                       readInstanceRow));
  if (!record) return instanceNotFound(name);
  SCALWS_ASSIGN_OR_RETURN(std::vector<cpu::CpuAssignment> cpus, readAssignments(&name));
  for (const cpu::CpuAssignment& a : cpus) record->assigned_cpus.add(a.cpu);
  SCALWS_RETURN_IF_ERROR(txn.commit());
  return std::move(*record);
}

Result<std::vector<InstanceRecord>> StateStore::listInstances() {
  SCALWS_ASSIGN_OR_RETURN(Transaction txn, beginRead());
  SCALWS_ASSIGN_OR_RETURN(std::vector<InstanceRecord> out,
                          readRows(db_.query("SELECT " + std::string(kInstanceColumns) +
                                             " FROM instances ORDER BY name"),
                                   readInstanceRow));
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < out.size(); ++i) index[out[i].name] = i;
  SCALWS_ASSIGN_OR_RETURN(std::vector<cpu::CpuAssignment> cpus, readAssignments(nullptr));
  for (const cpu::CpuAssignment& a : cpus) {
    auto it = index.find(a.instance);
    if (it != index.end()) out[it->second].assigned_cpus.add(a.cpu);
  }
  SCALWS_RETURN_IF_ERROR(txn.commit());
  return out;
}

// --- CPUs --------------------------------------------------------------------------------

Result<std::vector<cpu::CpuAssignment>> StateStore::listCpuAssignments() {
  return readAssignments(nullptr);
}

Result<std::vector<cpu::CpuUsage>> StateStore::cpuUsage() {
  SCALWS_ASSIGN_OR_RETURN(std::vector<cpu::CpuAssignment> assignments, readAssignments(nullptr));
  return allocator_.usage(assignments);
}

}  // namespace scalws::controller::state
