// InstanceSupervisor: what is sent to every serving worker and answered once all replied —
// reload, cache purge, reopening the log files.
#include <memory>

#include "common/log.h"
#include "controller/deferred_call.h"
#include "controller/instances/instance_config.h"
#include "controller/instances/instance_supervisor.h"
#include "controller/pools/pool_binding.h"
#include "controller/shared/shared_listeners.h"

namespace scalws::controller {

using common::Result;
using common::Status;
using common::StatusCode;

// --- reload ------------------------------------------------------------------------------

void InstanceSupervisor::doReload(Done done) {
  if (state_ != State::kRunning) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "instance " + record_.name + " is " + std::string(stateName()) +
                           ", not running; its stored config applies when it starts"));
  }
  Result<common::config::SiteConfig> site = loadInstanceConfig(record_.config, record_.config_path);
  if (!site.ok()) return done(site.status());
  if (running_site_ && !sameListenAddresses(*running_site_, *site)) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "the listen addresses changed; that needs `scalwsctl instance restart " +
                           record_.name + "`"));
  }
  if (running_site_ && common::config::serverOrDefaults(*running_site_).instance_access_log !=
                           common::config::serverOrDefaults(*site).instance_access_log) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "[server].access_log was turned on or off; that needs `scalwsctl instance "
                       "restart " +
                           record_.name + "`"));
  }
  if (!resources_.cachesFit(*site)) {
    return done(Status(StatusCode::kFailedPrecondition,
                       "the caches' storage changed (which caches, or a memory, disk, max_disk "
                       "or max_entry), or the limit table's (a limit added or all removed, or "
                       "limit_table); that needs `scalwsctl instance restart " +
                           record_.name + "`"));
  }
  Result<std::vector<ipc::PhpPoolGrant>> pools = instancePoolGrants(*env_.store, record_, *site);
  if (!pools.ok()) return done(pools.status());
  Result<std::vector<ipc::AppGrant>> apps = appGrants(*site);
  if (!apps.ok()) return done(apps.status());
  // Spawns from now on use the new config; workers running get it over their channel.
  struct Tally {
    size_t waiting = 0;
    size_t taken = 0;
    Status first_error;
    Done done;
    // What ran before: back in force when every worker refused the new one (e.g. a pool
    // outside their sandbox), so a replacement does not start on what nobody runs.
    ipc::ReloadArgs running;
    std::optional<common::config::SiteConfig> site;
  };
  auto tally = std::make_shared<Tally>();
  tally->done = std::move(done);
  tally->running =
      std::exchange(running_, ipc::ReloadArgs{record_.config, record_.config_path,
                                              std::move(pools).value(), std::move(apps).value()});
  tally->site = std::exchange(running_site_, std::move(site).value());
  std::vector<WorkerProcess*> targets = readyWorkers();
  tally->waiting = targets.size();
  if (targets.empty()) return tally->done(saveLaunch());  // the next spawns get it
  std::weak_ptr<bool> alive = alive_;
  for (WorkerProcess* w : targets) {
    w->reload(running_, [this, alive, tally, w](const Status& s) {
      if (s.ok()) ++tally->taken;
      if (s.ok() && !alive.expired()) recordDigest(*w);
      if (!s.ok() && tally->first_error.ok()) tally->first_error = s;
      if (--tally->waiting != 0) return;
      if (!alive.expired() && state_ == State::kRunning) {
        if (tally->taken == 0) {
          running_ = std::move(tally->running);
          running_site_ = std::move(tally->site);
        } else {
          Status saved = saveLaunch();
          if (!saved.ok() && tally->first_error.ok()) tally->first_error = saved;
          // Its names may have changed: the fronts and every worker on its addresses hear.
          if (env_.shared != nullptr && !shared_listens_.empty()) env_.shared->refresh();
        }
      }
      tally->done(tally->first_error);
    });
  }
}

// --- cache purge -------------------------------------------------------------------------

void InstanceSupervisor::purgeCache(const ipc::CachePurge& purge,
                                    std::function<void(Result<ipc::CachePurgeResult>)> done) {
  std::vector<WorkerProcess*> targets = readyWorkers();
  if (state_ != State::kRunning || targets.empty()) {
    Status why(StatusCode::kFailedPrecondition, "instance " + record_.name + " is not running");
    return deferCall(env_.loop, [done, why] { done(why); });
  }
  struct Tally {
    size_t waiting = 0;
    ipc::CachePurgeResult total;
    Status first_error;
    std::function<void(Result<ipc::CachePurgeResult>)> done;
  };
  auto tally = std::make_shared<Tally>();
  tally->waiting = targets.size();
  tally->done = std::move(done);
  for (WorkerProcess* w : targets) {
    w->purgeCache(purge, [tally](Result<ipc::CachePurgeResult> r) {
      if (r.ok()) {
        tally->total.memory_entries += r->memory_entries;
        tally->total.disk_files += r->disk_files;
      } else if (tally->first_error.ok()) {
        tally->first_error = r.status();
      }
      if (--tally->waiting != 0) return;
      if (!tally->first_error.ok()) return tally->done(tally->first_error);
      tally->done(tally->total);
    });
  }
}

// --- logs --------------------------------------------------------------------------------

void InstanceSupervisor::reopenLogs(Done done) {
  std::vector<WorkerProcess*> targets = readyWorkers();
  if (!resources_.hasLogs() || state_ != State::kRunning || targets.empty()) {
    Status why(StatusCode::kFailedPrecondition, "instance " + record_.name + " is not running");
    return deferCall(env_.loop, [done, why] { done(why); });
  }
  Status reopened = resources_.reopenLogs();
  if (!reopened.ok()) {
    Status why(reopened.code(), "instance " + record_.name + ": " + reopened.message());
    return deferCall(env_.loop, [done, why] { done(why); });
  }
  struct Tally {
    size_t waiting = 0;
    Status first_error;
    Done done;
  };
  auto tally = std::make_shared<Tally>();
  tally->waiting = targets.size();
  tally->done = std::move(done);
  for (WorkerProcess* w : targets) {
    Result<common::UniqueFd> copy = resources_.duplicateAccessLog();
    auto counted = [tally](const Status& s) {
      if (!s.ok() && tally->first_error.ok()) tally->first_error = s;
      if (--tally->waiting == 0) tally->done(tally->first_error);
    };
    if (!copy.ok()) {
      counted(copy.status());
      continue;
    }
    w->reopenLogs(std::move(copy).value(), counted);
  }
}

}  // namespace scalws::controller
