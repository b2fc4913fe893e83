// The typed rows of the state DB, as the state store reads and writes
// them. Plain values; times are Unix milliseconds from the store's clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/site_config.h"
#include "common/cpu_set.h"
#include "common/status.h"
#include "ipc/worker_messages.h"

namespace scalws::controller::state {

using common::config::WorkerMode;

enum class DesiredState { kStopped, kRunning };

using ipc::parseWorkerMode;  // "multi" | "single"
using ipc::workerModeName;
std::string_view desiredStateName(DesiredState state);  // "running" | "stopped"
common::Result<DesiredState> parseDesiredState(std::string_view name);

// Instance and pool names end up in process arguments, file names and log lines:
// 1-64 characters of [A-Za-z0-9._-], starting with a letter or digit. `what` is
// "instance" or "pool", for the message.
common::Status validateName(std::string_view what, std::string_view name);

// What `instance add` stores. The config is TOML text the caller has already validated
// with the config loader; config_path is where it was read from (for messages).
struct NewInstance {
  std::string name;
  WorkerMode mode = WorkerMode::kMulti;
  uint32_t cpus = 1;  // how many CPUs it wants
  bool shared_cpus = false;
  std::string user;           // never empty: who the workers run as ("root" only when asked for)
  bool user_created = false;  // the controller made `user` for it, and removes it with it
  std::string config;
  std::string config_path;
  DesiredState desired = DesiredState::kStopped;
};

struct InstanceRecord {
  std::string name;
  WorkerMode mode = WorkerMode::kMulti;
  uint32_t cpus = 1;
  bool shared_cpus = false;
  std::string user;
  bool user_created = false;
  std::string config;
  std::string config_path;
  DesiredState desired = DesiredState::kStopped;
  // What the supervisor last observed ("stopped", "running", "failed", ...) and why; free
  // text owned by the supervisor. A new instance is "stopped" with no reason.
  std::string status;
  std::string status_reason;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  common::CpuSet assigned_cpus;  // from cpu_assignments
};

// A PHP-FPM pool. External pools have only address and max_conns; managed pools
// are run by the controller as managed_user with `processes` children.
struct PoolRecord {
  std::string name;
  std::string address;     // "unix:/absolute/path" or "tcp:host:port"
  uint32_t max_conns = 0;  // 0: unknown (workers then use one connection per request)
  bool managed = false;
  std::string managed_user;             // managed only
  uint32_t processes = 0;               // managed only, >= 1
  std::string php_fpm_path;             // managed only; "" = the controller's default binary
  std::optional<std::string> instance;  // the instance it is assigned to
  // While assigned: the name the instance's php routes call it by (pool name rules;
  // defaults to the pool's own name). Empty while unassigned.
  std::string assigned_as;
  int64_t created_ms = 0;  // set by the store
  int64_t updated_ms = 0;  // set by the store
};

// Checks a pool's fields (name, address form, managed/external consistency).
common::Status validatePool(const PoolRecord& pool);

// An app the controller runs (controller/apps/app_spec.h): its spec as JSON, and the
// instance it is assigned to under the name that instance's routes use.
struct AppRecord {
  std::string name;
  std::string spec;  // app_spec.h's JSON
  std::optional<std::string> instance;
  std::string assigned_as;  // empty when unassigned
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

// A worker process the controller started and believes alive (`workers` table). Written
// when the worker says hello, deleted when the controller sees it exit; a controller that
// starts finds the rows of workers that outlived its predecessor.
struct WorkerRecord {
  int64_t pid = 0;
  std::string instance;
  uint32_t slot = 0;
  uint64_t start_ticks = 0;    // /proc/PID/stat field 22: tells a reused PID apart
  std::string attach_address;  // abstract socket name, hex-encoded, without the leading NUL
  int64_t started_ms = 0;
  std::string launch_digest;  // of what it was told (launch_digest.h); "" = unknown

  friend bool operator==(const WorkerRecord&, const WorkerRecord&) = default;
};

// What an instance's workers were last told: the config text, its path, the PHP pools and
// the apps (the body of a `reload`).
struct LaunchRecord {
  std::string config;
  std::string config_path;
  std::vector<ipc::PhpPoolGrant> php_pools;
  int64_t updated_ms = 0;
  std::vector<ipc::AppGrant> apps;

  friend bool operator==(const LaunchRecord&, const LaunchRecord&) = default;
};

struct EventRecord {
  int64_t id = 0;  // increasing, never reused
  int64_t time_ms = 0;
  std::optional<std::string> instance;  // none: about the host or the controller
  std::string kind;                     // a dotted word, see kEvent* below
  std::string message;
};

// Event kinds the store itself records, in the same transaction as the change.
inline constexpr std::string_view kEventInstanceAdded = "instance.added";
inline constexpr std::string_view kEventInstanceRemoved = "instance.removed";
inline constexpr std::string_view kEventInstanceConfig = "instance.config";
inline constexpr std::string_view kEventInstanceDesired = "instance.desired";
inline constexpr std::string_view kEventInstanceStatus = "instance.status";
inline constexpr std::string_view kEventPoolAdded = "pool.added";
inline constexpr std::string_view kEventPoolRemoved = "pool.removed";
inline constexpr std::string_view kEventPoolAssigned = "pool.assigned";
inline constexpr std::string_view kEventPoolReleased = "pool.released";
// Recorded by the supervisor (controller/), through appendEvent.
inline constexpr std::string_view kEventWorkerExited = "worker.exited";
inline constexpr std::string_view kEventWorkerAttached = "worker.attached";
inline constexpr std::string_view kEventWorkerRefused = "worker.refused";
inline constexpr std::string_view kEventControllerStarted = "controller.started";
inline constexpr std::string_view kEventControllerStopped = "controller.stopped";

}  // namespace scalws::controller::state
