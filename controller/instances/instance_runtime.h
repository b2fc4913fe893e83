// InstanceRuntime: what the control handlers need from the part that runs processes (the
// Controller, over its InstanceSupervisors), as an interface so the handlers can be tested
// with a fake one.
//
// Every operation calls `done` exactly once, on the loop thread, never from inside the
// call. `commit` is run once the operation is sure to go ahead (for start: after the
// listeners are bound) and persists what the operator asked for; if it fails, the
// operation stops there and reports that error. Operations on one instance run in the
// order they were asked for.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "controller/state/records.h"
#include "ipc/cache_messages.h"
#include "ipc/message.h"
#include "ipc/php_pool_grants.h"

namespace scalws::controller {

class InstanceRuntime {
 public:
  using Done = std::function<void(const common::Status&)>;
  using Commit = std::function<common::Status()>;

  virtual ~InstanceRuntime() = default;

  // The DB row was created or changed (instance add / set).
  virtual void instanceStored(const state::InstanceRecord& record) = 0;

  virtual void start(const std::string& name, Commit commit, Done done) = 0;
  virtual void stop(const std::string& name, Done done) = 0;
  virtual void restart(const std::string& name, Commit commit, Done done) = 0;
  virtual void reload(const std::string& name, Done done) = 0;
  // Stops the instance, then runs `commit` (the DB delete), then forgets it.
  virtual void remove(const std::string& name, Commit commit, Done done) = 0;

  // What runs: "stopped", "starting", "running", "stopping" or "failed".
  virtual std::string runtimeState(const std::string& name) const = 0;
  virtual size_t processCount(const std::string& name) const = 0;
  virtual ipc::Json processes(const std::string& name) const = 0;
  // The config its workers run, when they run.
  virtual std::optional<common::config::SiteConfig> runningSite(const std::string& name) const = 0;
  virtual bool reloadPending(const std::string& name) const = 0;
  // The PHP pools its workers run with (pool_binding.h), when they run.
  virtual std::optional<std::vector<ipc::PhpPoolGrant>> runningPools(
      const std::string& name) const {
    (void)name;
    return std::nullopt;
  }
  // The apps its workers run with (app_binding.h), when they run.
  virtual std::optional<std::vector<ipc::AppGrant>> runningApps(const std::string& name) const {
    (void)name;
    return std::nullopt;
  }
  // Drops cached answers in every serving worker of `name` (ipc/cache_messages.h); `done`
  // once all of them did, with the totals.
  using PurgeDone = std::function<void(common::Result<ipc::CachePurgeResult>)>;
  virtual void purgeCache(const std::string& name, const ipc::CachePurge& purge, PurgeDone done) {
    (void)purge;
    done(common::Status(common::StatusCode::kFailedPrecondition,
                        "instance " + name + " is not running"));
  }
  // Reopens the log files of running instance `name` and hands them to its workers
  // (InstanceSupervisor::reopenLogs); `done` once all of them write to them.
  virtual void reopenLogs(const std::string& name, Done done) {
    done(common::Status(common::StatusCode::kFailedPrecondition,
                        "instance " + name + " is not running"));
  }
  // The addresses instances share (controller/shared/): every one (nullopt), or those
  // `instance` claims a name on; [] when nothing is shared.
  virtual ipc::Json sharedAddresses(const std::optional<std::string>& instance) const {
    (void)instance;
    return ipc::Json::array();
  }
  // Its caches' sizes as a worker last said them (empty when none run or none said yet).
  virtual std::vector<ipc::CacheFigures> cacheFigures(const std::string& name) const {
    (void)name;
    return {};
  }
};

}  // namespace scalws::controller
