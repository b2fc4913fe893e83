// The migrations of the state DB (see migrations.h). Append only: a released migration is
// never edited, because DBs in the field are already past it.
//
// Conventions: STRICT tables (a wrong type is an error, not a silent conversion); times
// are Unix milliseconds; flags are 0/1 integers; names follow instance/pool name rules
// (also checked by the store, repeated here so no writer can get past them).
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
// their instance.
constexpr std::string_view kMetricsSchema = R"sql(
CREATE TABLE metrics_10s (
  instance TEXT NOT NULL REFERENCES instances (name) ON DELETE CASCADE,
  bucket_ms INTEGER NOT NULL,
  req_1xx INTEGER NOT NULL, req_2xx INTEGER NOT NULL, req_3xx INTEGER NOT NULL,
  req_4xx INTEGER NOT NULL, req_5xx INTEGER NOT NULL,
  act_static INTEGER NOT NULL, act_respond INTEGER NOT NULL, act_proxy INTEGER NOT NULL,
  act_php INTEGER NOT NULL, act_app INTEGER NOT NULL, act_status INTEGER NOT NULL,
  act_other INTEGER NOT NULL,
  bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL,
  conn_accepted INTEGER NOT NULL, conn_closed INTEGER NOT NULL, conn_active INTEGER NOT NULL,
  tls_handshakes INTEGER NOT NULL,
  file_cache_hits INTEGER NOT NULL, file_cache_misses INTEGER NOT NULL,
  upstream_connects INTEGER NOT NULL, upstream_reuses INTEGER NOT NULL,
  upstream_errors INTEGER NOT NULL,
  php_connects INTEGER NOT NULL, php_reuses INTEGER NOT NULL, php_errors INTEGER NOT NULL,
  php_waits INTEGER NOT NULL, php_wait_us INTEGER NOT NULL,
  cpu_us INTEGER NOT NULL, rss_bytes INTEGER NOT NULL,
  latency_sum_us INTEGER NOT NULL,
  latency BLOB NOT NULL,
  PRIMARY KEY (instance, bucket_ms)
) STRICT, WITHOUT ROWID;
CREATE INDEX metrics_10s_by_bucket ON metrics_10s (bucket_ms);

CREATE TABLE metrics_1m (
  instance TEXT NOT NULL REFERENCES instances (name) ON DELETE CASCADE,
  bucket_ms INTEGER NOT NULL,
  req_1xx INTEGER NOT NULL, req_2xx INTEGER NOT NULL, req_3xx INTEGER NOT NULL,
  req_4xx INTEGER NOT NULL, req_5xx INTEGER NOT NULL,
  act_static INTEGER NOT NULL, act_respond INTEGER NOT NULL, act_proxy INTEGER NOT NULL,
  act_php INTEGER NOT NULL, act_app INTEGER NOT NULL, act_status INTEGER NOT NULL,
  act_other INTEGER NOT NULL,
  bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL,
  conn_accepted INTEGER NOT NULL, conn_closed INTEGER NOT NULL, conn_active INTEGER NOT NULL,
  tls_handshakes INTEGER NOT NULL,
  file_cache_hits INTEGER NOT NULL, file_cache_misses INTEGER NOT NULL,
  upstream_connects INTEGER NOT NULL, upstream_reuses INTEGER NOT NULL,
  upstream_errors INTEGER NOT NULL,
  php_connects INTEGER NOT NULL, php_reuses INTEGER NOT NULL, php_errors INTEGER NOT NULL,
  php_waits INTEGER NOT NULL, php_wait_us INTEGER NOT NULL,
  cpu_us INTEGER NOT NULL, rss_bytes INTEGER NOT NULL,
  latency_sum_us INTEGER NOT NULL,
  latency BLOB NOT NULL,
  PRIMARY KEY (instance, bucket_ms)
) STRICT, WITHOUT ROWID;
CREATE INDEX metrics_1m_by_bucket ON metrics_1m (bucket_ms);
)sql";

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

// Migration 5: HTTP/3 in the rollups — requests answered over it, QUIC handshakes, Retry
// packets, client migrations and lost packets. Rows written before it read 0.
constexpr std::string_view kHttp3MetricsSchema = R"sql(
ALTER TABLE metrics_10s ADD COLUMN http3_requests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_10s ADD COLUMN quic_handshakes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_10s ADD COLUMN quic_retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_10s ADD COLUMN quic_migrations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_10s ADD COLUMN quic_lost_packets INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_1m ADD COLUMN http3_requests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_1m ADD COLUMN quic_handshakes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_1m ADD COLUMN quic_retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_1m ADD COLUMN quic_migrations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics_1m ADD COLUMN quic_lost_packets INTEGER NOT NULL DEFAULT 0;
)sql";

constexpr Migration kMigrations[] = {
    {1, "instances, cpu_assignments, php_pools, events", kInitialSchema},
    {2, "metrics_10s and metrics_1m rollups", kMetricsSchema},
    {3, "workers: live worker processes, for re-attaching", kWorkersSchema},
    {4, "php_pools.assigned_as: the name an instance's php routes use", kPoolBindingSchema},
    {5, "metrics: HTTP/3 requests and QUIC handshakes, retries, migrations, losses",
     kHttp3MetricsSchema},
};

}  // namespace

std::span<const Migration> allMigrations() {
  return kMigrations;
}

}  // namespace scalws::controller::state
