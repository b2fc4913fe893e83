// The migrations of the state DB (see migrations.h). Append only: a released migration is
// never edited, because DBs in the field are already past it. Migration 2's tables are
// written from the metrics field list (columns of `since` 2): those rows of the list are as
// fixed as this text, and a figure added later comes with its own migration.
//
// Conventions: STRICT tables (a wrong type is an error, not a silent conversion); times
// are Unix milliseconds; flags are 0/1 integers; names follow instance/pool name rules
// (also checked by the store, repeated here so no writer can get past them).
#include <string>

#include "controller/state/metrics_row.h"
#include "controller/state/migrations.h"

namespace scalws::controller::state {

namespace {

// Migration 1: instances, their CPUs, PHP pools and the event log.
constexpr std::string_view kInitialSchema = R"sql(
CREATE TABLE instances (
  name TEXT PRIMARY KEY NOT NULL
    CHECK (length(name) BETWEEN 1 AND 64 AND name GLOB '[A-Za-z0-9]*'
           AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
  mode TEXT NOT NULL CHECK (mode IN ('multi', 'single')),
  cpus INTEGER NOT NULL CHECK (cpus >= 1),
  shared_cpus INTEGER NOT NULL CHECK (shared_cpus IN (0, 1)),
  user TEXT NOT NULL CHECK (user <> ''),
  config TEXT NOT NULL,
  config_path TEXT NOT NULL,
  desired_state TEXT NOT NULL CHECK (desired_state IN ('running', 'stopped')),
  status TEXT NOT NULL,
  status_reason TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE cpu_assignments (
  instance TEXT NOT NULL REFERENCES instances (name) ON DELETE CASCADE,
  cpu INTEGER NOT NULL CHECK (cpu >= 0),
  shared INTEGER NOT NULL CHECK (shared IN (0, 1)),
  PRIMARY KEY (instance, cpu)
) STRICT, WITHOUT ROWID;
CREATE INDEX cpu_assignments_by_cpu ON cpu_assignments (cpu);

-- "Exclusive means exclusive", enforced by the DB itself: a CPU held exclusively gets no
-- second holder, and a CPU with any holder cannot become someone's exclusive CPU.
CREATE TRIGGER cpu_assignments_exclusive BEFORE INSERT ON cpu_assignments
WHEN EXISTS (SELECT 1 FROM cpu_assignments
             WHERE cpu = NEW.cpu AND (shared = 0 OR NEW.shared = 0))
BEGIN
  SELECT RAISE(ABORT, 'CPU already held by another instance and one of them is exclusive');
END;

CREATE TABLE php_pools (
  name TEXT PRIMARY KEY NOT NULL
    CHECK (length(name) BETWEEN 1 AND 64 AND name GLOB '[A-Za-z0-9]*'
           AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
  address TEXT NOT NULL CHECK (address GLOB 'unix:/*' OR address GLOB 'tcp:?*'),
  max_conns INTEGER NOT NULL CHECK (max_conns >= 0),
  managed INTEGER NOT NULL CHECK (managed IN (0, 1)),
  managed_user TEXT NOT NULL,
  processes INTEGER NOT NULL CHECK (processes >= 0),
  php_fpm_path TEXT NOT NULL,
  -- A removed instance releases its pools; removing an assigned pool is refused by the
  -- store (the instance's php routes would lose their pool).
  instance TEXT REFERENCES instances (name) ON DELETE SET NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  CHECK (managed = 0 OR (managed_user <> '' AND processes >= 1))
) STRICT;
CREATE INDEX php_pools_by_instance ON php_pools (instance);

-- No foreign key on instance: the history of a removed instance stays readable.
-- AUTOINCREMENT: ids are never reused after pruning, so "events after id N" stays valid.
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time_ms INTEGER NOT NULL,
  instance TEXT,
  kind TEXT NOT NULL,
  message TEXT NOT NULL
) STRICT;
CREATE INDEX events_by_instance ON events (instance, id);
CREATE INDEX events_by_time ON events (time_ms);
)sql";

// Migration 2: per-instance metrics rollups. One row per instance and bucket;
// counters are increases over the bucket, conn_active and rss_bytes are gauges at its end.
// Plain integer columns are compact in SQLite (0 and 1 take no payload bytes) and need no
// decoding to query; the latency histogram is a sparse blob (metrics_row.h). Rows die with
// their instance. The columns are those of the field list (common/metrics/metrics_fields.h)
// made by this version, so this text is what it always was.
const std::string& metricsSchema() {
  static const std::string sql =
      metricsTableSql("metrics_10s", 2) + metricsTableSql("metrics_1m", 2);
  return sql;
}

// Migration 7: the proxy response cache's figures (hits, misses, stale served,
// revalidations, body bytes sent from it), as columns of both rollups; older rows count 0.
const std::string& proxyCacheMetricsSchema() {
  static const std::string sql = metricsColumnsSince(7);
  return sql;
}

// Migration 8: HTTP/3 in the rollups — requests answered over it, QUIC handshakes, Retry
// packets, client migrations and lost packets. Rows written before it read 0.
const std::string& http3MetricsSchema() {
  static const std::string sql = metricsColumnsSince(8);
  return sql;
}

// Migration 3: the worker processes the controller started, so a controller that
// comes back after a crash finds the workers still serving and re-attaches to them. One row
// per live process; start_ticks (field 22 of /proc/PID/stat) tells a worker from an
// unrelated process that got its PID later. attach_address is the abstract Unix socket the
// worker accepts a new controller on ('' until its hello). Rows die with their instance.
constexpr std::string_view kWorkersSchema = R"sql(
CREATE TABLE workers (
  pid INTEGER PRIMARY KEY NOT NULL CHECK (pid > 0),
  instance TEXT NOT NULL REFERENCES instances (name) ON DELETE CASCADE,
  slot INTEGER NOT NULL CHECK (slot >= 0),
  start_ticks INTEGER NOT NULL CHECK (start_ticks >= 0),
  attach_address TEXT NOT NULL,
  started_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX workers_by_instance ON workers (instance, slot);
)sql";

// Migration 4: the name an instance's php routes use for a pool assigned to it.
// An instance's config names pools in its routes ("main"); `pool assign POOL INSTANCE --as
// main` binds a registered pool to that name, so reassigning a site to another pool is one
// command and a reload. A name is bound to at most one pool per instance. Pools assigned
// before this migration keep their own name. Meaningful only while `instance` is set.
constexpr std::string_view kPoolBindingSchema = R"sql(
ALTER TABLE php_pools ADD COLUMN assigned_as TEXT
  CHECK (assigned_as IS NULL OR (length(assigned_as) BETWEEN 1 AND 64
         AND assigned_as GLOB '[A-Za-z0-9]*' AND assigned_as NOT GLOB '*[^A-Za-z0-9._-]*'));
UPDATE php_pools SET assigned_as = name WHERE instance IS NOT NULL;
CREATE UNIQUE INDEX php_pools_binding ON php_pools (instance, assigned_as)
  WHERE instance IS NOT NULL;
)sql";

// Migration 5: what each instance's workers were told, so a controller that re-attaches
// takes the config from here and never from a worker. `launches` holds the last config,
// path and pools sent (at start or by a reload taken by a worker); a worker row holds the
// digest of everything it was told (WorkerSettings, launch_digest.h). A worker that reports
// anything else is stopped and replaced from this table. Rows of workers started before
// this migration have no digest ('') and so are replaced on the next re-attach.
constexpr std::string_view kLaunchesSchema = R"sql(
CREATE TABLE launches (
  instance TEXT PRIMARY KEY NOT NULL REFERENCES instances (name) ON DELETE CASCADE,
  config TEXT NOT NULL,
  config_path TEXT NOT NULL,
  php_pools TEXT NOT NULL,
  updated_ms INTEGER NOT NULL
) STRICT;
ALTER TABLE workers ADD COLUMN launch_digest TEXT NOT NULL DEFAULT '';
)sql";

// Migration 6: an instance runs as a system user of its own unless told otherwise, made by
// the controller (and removed with the instance). Instances added before keep their user.
constexpr std::string_view kInstanceUserSchema = R"sql(
ALTER TABLE instances ADD COLUMN user_created INTEGER NOT NULL DEFAULT 0
  CHECK (user_created IN (0, 1));
)sql";

// Migration 9: the Node.js and Python apps the controller runs (controller/apps/), each
// with its spec as JSON and the instance (and route name) it is assigned to.
constexpr std::string_view kAppsSchema = R"sql(
CREATE TABLE apps (
  name TEXT PRIMARY KEY NOT NULL,
  spec TEXT NOT NULL,
  instance TEXT REFERENCES instances(name) ON DELETE SET NULL,
  assigned_as TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  UNIQUE (instance, assigned_as)
) STRICT;
)sql";

// Migration 10: the apps the workers were told (ipc/app_grants.h), beside their pools.
constexpr std::string_view kLaunchAppsSchema = R"sql(
ALTER TABLE launches ADD COLUMN apps TEXT NOT NULL DEFAULT '[]';
)sql";

}  // namespace

std::span<const Migration> allMigrations() {
  static const Migration kMigrations[] = {
      {1, "instances, cpu_assignments, php_pools, events", kInitialSchema},
      {2, "metrics_10s and metrics_1m rollups", metricsSchema()},
      {3, "workers: live worker processes, for re-attaching", kWorkersSchema},
      {4, "php_pools.assigned_as: the name an instance's php routes use", kPoolBindingSchema},
      {5, "launches and workers.launch_digest: what the workers were told", kLaunchesSchema},
      {6, "instances.user_created: a system user of its own", kInstanceUserSchema},
      {7, "metrics: the proxy response cache's figures", proxyCacheMetricsSchema()},
      {8, "metrics: HTTP/3 requests and QUIC handshakes, retries, migrations, losses",
       http3MetricsSchema()},
      {9, "apps: Node.js and Python apps the controller runs", kAppsSchema},
      {10, "launches.apps: the apps an instance's workers were told", kLaunchAppsSchema},
  };
  return kMigrations;
}

}  // namespace scalws::controller::state
