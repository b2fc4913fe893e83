// The messages of the controller <-> worker channel: one struct per op's args, each with
// the one encoder and the one decoder that both ends use. Nothing else writes or reads
// these JSON objects.
//
// The conversation (every request is answered; ops in ops.h):
//   worker -> hello      HelloArgs       a spawned worker: pid, instance, attach_address
//   ctl    -> config     ConfigArgs      what to be: WorkerSettings + controller_uid + the
//                                        instance's TLS ticket secret
//   ctl    -> listeners  ListenersArgs   + one fd per entry, in order (bound, listening;
//                                        a quic entry's fd is a bound UDP socket, a
//                                        handoff entry's a shared address's channel), then
//                                        one per cache: its memory tier (a memfd), then
//                                        the access log's when access_log is set
//   worker -> ready      ReadyArgs       it serves (pid, loops, listeners with their fd
//                                        numbers, the sandbox report), or why not
//   ctl    -> reload     ReloadArgs      a new config text, path, pools and apps
//   ctl    -> stop       {}              graceful stop
//   worker -> metrics    MetricsArgs     notification: monotonic totals (common/metrics)
//   ctl    -> stderr     {} + one fd     a re-attached worker's new stdout and stderr (a pipe
//                                        the controller reads; the old one went with the
//                                        controller that died)
//   ctl    -> cache_purge CachePurge     drop cached answers (cache_messages.h); answered
//                                        with a CachePurgeResult
//   ctl    -> shared_names {shared}      who claims which names on the shared addresses it
//                                        listens on (shared_names.h), in force for the
//                                        connections handed over from then on
//   ctl    -> reopen_logs {} + one fd    the instance's access log, reopened by the
//                                        controller after a rotation; answered once the
//                                        worker writes to it
// A controller that re-attaches after a restart connects to the worker's attach socket and
// gets a hello with `attached` set: the worker's state, its WorkerSettings and its
// listeners. The controller takes none of it on trust (controller/instances/).
//
// Wire names are stable: a worker started by an older controller must still be understood
// by a newer one that re-attaches to it. Decoders refuse a wrong type, a missing field, an
// out-of-range number, and say which field; unknown extra fields are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/cpu_set.h"
#include "common/metrics/metrics_snapshot.h"
#include "common/metrics/upstream_metrics.h"
#include "common/status.h"
#include "ipc/app_grants.h"
#include "ipc/cache_messages.h"
#include "ipc/message.h"
#include "ipc/php_pool_grants.h"
#include "ipc/sandbox_summary.h"
#include "ipc/shared_names.h"

namespace scalws::ipc {

// The most loops (and slots) a worker is told to run.
inline constexpr uint32_t kMaxWorkerLoops = 1024;

// One listening socket: which loop of the worker accepts on it and what it was bound for.
struct ListenerSpec {
  uint32_t loop = 0;
  std::string address;
  uint16_t port = 0;
  bool tls = false;
  // The UDP socket of an HTTP/3 listener (bound, not listening); `steering` is its place in
  // the port's reuseport group, which the connection IDs the worker issues carry. Absent on
  // the wire for a TCP listener, so a worker without HTTP/3 is understood.
  bool quic = false;
  uint32_t steering = 0;
  // A channel of a shared address instead of a listening socket: one end of a
  // SOCK_SEQPACKET socketpair on which the address's front hands over connections, one
  // descriptor per message (front_messages.h). Absent on the wire otherwise.
  // Both quic and handoff: the UDP socket of an HTTP/3 listener on a shared address, which
  // only sends; its datagrams come on the address's channel (forwarded_datagram.h), and
  // `steering` is unused (the IDs carry a route, common/net/quic_route.h).
  bool handoff = false;

  friend bool operator==(const ListenerSpec&, const ListenerSpec&) = default;
};

// A listener as a serving worker holds it: the fd number is in the worker's own table, so
// a controller re-attaching can take a copy (pidfd_getfd).
struct ListenerReport {
  ListenerSpec spec;
  int fd = -1;
};

// What a worker is told to be (the body of `config`) and what it reports back on attach.
// Everything a worker serves follows from it.
struct WorkerSettings {
  std::string instance;
  uint32_t slot = 0;
  common::config::WorkerMode mode = common::config::WorkerMode::kMulti;
  uint32_t loops = 1;  // multi: exactly 1
  common::CpuSet cpus;
  std::string user;
  std::string config;       // TOML without [server]
  std::string config_path;  // what relative paths and messages refer to
  std::vector<PhpPoolGrant> php_pools;
  std::vector<AppGrant> apps;

  friend bool operator==(const WorkerSettings&, const WorkerSettings&) = default;
};

struct HelloArgs {
  struct Attached {
    bool stopping = false;  // the worker drains and will exit
    WorkerSettings settings;
    std::vector<ListenerReport> listeners;
    std::vector<CacheAreaReport> caches;
  };

  int64_t pid = 0;
  std::string instance;
  std::string attach_address;  // hex of the abstract name; "" without an attach socket
  std::optional<Attached> attached;

  Json encode() const;
  static common::Result<HelloArgs> decode(const Json& args);
};

struct ConfigArgs {
  WorkerSettings settings;
  uint64_t controller_uid = 0;    // who may attach later besides root
  std::string tls_ticket_secret;  // raw bytes (hex on the wire); "" = none

  Json encode() const;
  static common::Result<ConfigArgs> decode(const Json& args);
};

struct ListenersArgs {
  std::vector<ListenerSpec> listeners;  // listeners[i] describes the i-th fd
  // The memory tier of each [cache.NAME] of the config, by name, and the limit table
  // (kLimitAreaName) when the config has a `limit`: caches[j] is the
  // (listeners.size() + j)-th fd. Absent on the wire when there are none.
  std::vector<std::string> caches;
  // The names on each shared address among the listeners (absent when none is shared).
  std::vector<SharedAddressNames> shared = {};
  // The instance's access log (opened by the controller, O_APPEND) is the last fd. Absent
  // on the wire when false.
  bool access_log = false;

  Json encode() const;
  static common::Result<ListenersArgs> decode(const Json& args);
};

struct ReadyArgs {
  bool ok = false;
  std::string error;  // when !ok
  int64_t pid = 0;
  uint32_t loops = 0;
  std::vector<ListenerReport> listeners;
  std::vector<CacheAreaReport> caches;
  SandboxSummary sandbox;  // what the worker says it entered

  Json encode() const;
  static common::Result<ReadyArgs> decode(const Json& args);
};

struct ReloadArgs {
  std::string config;
  std::string config_path;
  std::vector<PhpPoolGrant> php_pools;
  std::vector<AppGrant> apps;

  Json encode() const;
  static common::Result<ReloadArgs> decode(const Json& args);
};

struct MetricsArgs {
  int64_t pid = 0;
  uint32_t slot = 0;
  common::metrics::MetricsSnapshot metrics;
  // The proxy's per-upstream, per-server figures; empty (and not sent) when the worker
  // has proxied nothing.
  std::vector<common::metrics::UpstreamMetrics> upstreams;
  // Each cache's size (empty, and not sent, without caches).
  std::vector<CacheFigures> caches;

  Json encode() const;
  static common::Result<MetricsArgs> decode(const Json& args);
};

// WorkerSettings as the config message and an attach hello carry them (one JSON object).
Json settingsJson(const WorkerSettings& settings);

std::string_view workerModeName(common::config::WorkerMode mode);  // "multi" | "single"
common::Result<common::config::WorkerMode> parseWorkerMode(std::string_view name);

}  // namespace scalws::ipc
