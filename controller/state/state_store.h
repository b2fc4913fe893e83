// StateStore: the controller's typed access to its SQLite state.
//
// Every operation is one transaction (BEGIN IMMEDIATE ... COMMIT for changes, a read
// transaction for multi-table reads): it happened entirely or not at all, also across a
// crash (WAL, synchronous=FULL; see sqlite_db.h). Changes record their own event
// (records.h kEvent*) in the same transaction, so the history can never disagree with the
// state. addInstance runs the CPU allocator inside its transaction on the assignments it
// reads there, so two concurrent adds (even from two processes) never take the same CPU.
//
// One StateStore is one connection: use it from one thread at a time; other threads or
// processes open their own (SQLite serialises the writers, waiting up to the busy timeout).
//
// Policies:
//   - removeInstance deletes the instance's CPU assignments and metrics with it and
//     releases its PHP pools (they stay registered, unassigned); its events stay.
//   - removePool is refused while the pool is assigned (the instance's php routes need it).
//   - assignPool is refused while the pool is assigned to another instance: taking a pool
//     (running as its tenant's user) from one tenant to give it to another is done in two
//     explicit steps, releasePool then assignPool.
//   - an instance names its pools in its php routes; assignPool binds a pool to one such
//     name ("as"), at most one pool per name and instance (php_pools.assigned_as).
// Errors: kNotFound for an unknown instance or pool, kAlreadyExists for a taken name,
// kInvalidArgument for bad fields, kResourceExhausted when CPUs run out (the allocator's
// message), kFailedPrecondition for refused removals, kTimeout when the DB stayed locked.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "controller/cpu/cpu_allocator.h"
#include "controller/cpu/cpu_assignment.h"
#include "controller/state/metrics_row.h"
#include "controller/state/records.h"
#include "controller/state/sqlite_db.h"

namespace scalws::controller::state {

// How long rows are kept by prune() (10 s rows a day, 1 min rows a month).
struct Retention {
  int64_t metrics_10s_ms = 24LL * 3600 * 1000;
  int64_t metrics_1m_ms = 30LL * 24 * 3600 * 1000;
  int64_t events_ms = 90LL * 24 * 3600 * 1000;
};

struct PruneCounts {
  int64_t metrics_10s = 0;
  int64_t metrics_1m = 0;
  int64_t events = 0;
};

class StateStore {
 public:
  using Clock = std::function<int64_t()>;  // Unix time in ms

  struct Options {
    int busy_timeout_ms = 5000;
    Clock clock;  // empty: the system clock; tests inject a fake one
  };

  // `state_dir`/state.db: the DB file inside a state directory.
  static std::string dbPath(const std::string& state_dir);

  // Opens (creating) the DB at db_path and brings its schema up to date (migrations.h).
  static common::Result<StateStore> open(const std::string& db_path, cpu::CpuAllocator allocator,
                                         Options options);
  static common::Result<StateStore> open(const std::string& db_path, cpu::CpuAllocator allocator) {
    return open(db_path, std::move(allocator), Options());
  }

  // --- instances ---
  // Stores the instance with CPUs chosen by the allocator; returns it as stored.
  common::Result<InstanceRecord> addInstance(const NewInstance& spec);
  common::Status setInstanceConfig(const std::string& name, const std::string& config,
                                   const std::string& config_path);
  common::Status setDesiredState(const std::string& name, DesiredState desired);
  // Records what the supervisor observed; an event only when status or reason changed.
  common::Status setStatus(const std::string& name, const std::string& status,
                           const std::string& reason);
  common::Status removeInstance(const std::string& name);
  common::Result<InstanceRecord> getInstance(const std::string& name);
  common::Result<std::vector<InstanceRecord>> listInstances();  // by name

  // --- CPUs ---
  common::Result<std::vector<cpu::CpuAssignment>> listCpuAssignments();  // by cpu, instance
  common::Result<std::vector<cpu::CpuUsage>> cpuUsage();                 // for `cpu list`
  const cpu::CpuAllocator& allocator() const { return allocator_; }

  // --- PHP pools ---
  // Stores a pool (created_ms/updated_ms are set here); pool.instance, when set, assigns it.
  common::Result<PoolRecord> addPool(const PoolRecord& pool);
  common::Status removePool(const std::string& name);
  // Assigns `pool` to `instance` under the name `as` its php routes use ("" = the pool's
  // own name). The pool that held that name on the instance, if any, is released in the
  // same transaction (its name in *replaced). Assigning again as the same name is a no-op.
  common::Status assignPool(const std::string& pool, const std::string& instance,
                            const std::string& as = "",
                            std::optional<std::string>* replaced = nullptr);
  common::Status releasePool(const std::string& pool);  // unassigns; ok when unassigned
  common::Result<PoolRecord> getPool(const std::string& name);
  common::Result<std::vector<PoolRecord>> listPools();  // by name

  // --- apps (state_store_apps.cpp) ---
  common::Result<AppRecord> addApp(const AppRecord& app);  // kAlreadyExists when taken
  common::Status removeApp(const std::string& name);       // refused while assigned
  // Binds `app` to `instance` as `as` ("" = its own name); refused when the instance has
  // another app under that name or the app is assigned elsewhere.
  common::Status assignApp(const std::string& app, const std::string& instance,
                           const std::string& as);
  common::Status releaseApp(const std::string& app);  // ok when unassigned
  common::Result<AppRecord> getApp(const std::string& name);
  common::Result<std::vector<AppRecord>> listApps();  // by name

  // --- events ---
  common::Result<EventRecord> appendEvent(const std::optional<std::string>& instance,
                                          std::string_view kind, std::string_view message);
  // Newest first; instance = nullopt: all events.
  common::Result<std::vector<EventRecord>> recentEvents(const std::optional<std::string>& instance,
                                                        int limit);

  // --- worker processes (state_store_workers.cpp) ---
  // Inserts or replaces the row of record.pid. kNotFound when the instance is gone.
  common::Status recordWorker(const WorkerRecord& record);
  common::Status forgetWorker(int64_t pid);  // ok when there is no such row
  // Ordered by instance, slot, pid; instance = nullopt: every worker.
  common::Result<std::vector<WorkerRecord>> listWorkers(const std::optional<std::string>& instance);
  // The fronts of shared addresses (migration 11), like the workers' rows.
  common::Status recordFront(const FrontRecord& record);
  common::Status forgetFront(int64_t pid);  // ok when there is no such row
  common::Result<std::vector<FrontRecord>> listFronts();
  // A reload the worker took: what it was told changed. Ok when there is no such row.
  common::Status setWorkerDigest(int64_t pid, const std::string& launch_digest);
  // What the instance's workers are told from now on (start, reload); kNotFound when the
  // instance is gone.
  common::Status saveLaunch(const std::string& instance, const LaunchRecord& launch);
  // nullopt when its workers were never told anything by a controller that kept it.
  common::Result<std::optional<LaunchRecord>> getLaunch(const std::string& instance);

  // --- metrics rollups ---
  // Writes rows (replacing a row already stored for the same instance and bucket, so a
  // retried batch is harmless) in one transaction. Rows of instances that no longer exist
  // are skipped (the collector may race a removal). Returns the number of rows written.
  common::Result<int64_t> insertMetrics(MetricsResolution resolution,
                                        std::span<const MetricsRow> rows);
  // Rows with from_ms <= bucket_ms < to_ms, oldest first.
  common::Result<std::vector<MetricsRow>> listMetrics(const std::string& instance,
                                                      MetricsResolution resolution, int64_t from_ms,
                                                      int64_t to_ms);
  // Deletes rows older than their retention at now_ms (bucket_ms < now_ms - retention).
  common::Result<PruneCounts> prune(int64_t now_ms, const Retention& retention);
  common::Result<PruneCounts> prune(int64_t now_ms) { return prune(now_ms, Retention()); }

  // The connection, for tests.
  SqliteDb& dbForTest() { return db_; }

 private:
  StateStore(SqliteDb db, cpu::CpuAllocator allocator, Clock clock)
      : db_(std::move(db)), allocator_(std::move(allocator)), clock_(std::move(clock)) {}

  int64_t now() const { return clock_(); }
  // A transaction that writes (the lock taken at BEGIN), or one that only reads.
  common::Result<Transaction> beginWrite() {
    return Transaction::begin(db_, Transaction::Kind::kImmediate);
  }
  common::Result<Transaction> beginRead() {
    return Transaction::begin(db_, Transaction::Kind::kRead);
  }
  // Inside an open transaction.
  common::Result<EventRecord> insertEvent(const std::optional<std::string>& instance,
                                          std::string_view kind, std::string_view message);
  // insertEvent for a caller that needs only whether it was stored.
  common::Status noteEvent(const std::optional<std::string>& instance, std::string_view kind,
                           std::string_view message);
  common::Result<bool> instanceExists(const std::string& name);
  common::Status requireInstance(const std::string& name);
  common::Result<std::vector<cpu::CpuAssignment>> readAssignments(const std::string* instance);
  common::Result<std::optional<PoolRecord>> readPool(const std::string& name);
  // The pool assigned to `instance` as `as`, if any.
  common::Result<std::optional<std::string>> poolBoundAs(const std::string& instance,
                                                         const std::string& as);
  // Clears `pool_name`'s instance and name there (no event: the caller says why).
  common::Status unassignPool(const std::string& pool_name, int64_t at);

  SqliteDb db_;
  cpu::CpuAllocator allocator_;
  Clock clock_;
};

}  // namespace scalws::controller::state
