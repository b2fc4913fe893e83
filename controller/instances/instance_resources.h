// InstanceResources: what an instance's workers share while it runs, besides their
// listeners: the memory tiers of its response caches and its limit table
// (instance_caches.h), the caches' sizes as a worker last said, and its log files
// (instance_log_files.h). Its InstanceSupervisor owns it and decides when a run begins and
// ends; this holds the resources and hands every new worker its copies.
//
// A run begins with begin() (areas made at start) or adopt() (areas taken back from
// re-attached workers), and end() drops the areas, forgets the figures and closes the log
// files; the cached answers go with the instance's last worker. Loop thread only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/instances/instance_caches.h"
#include "controller/instances/instance_log_files.h"
#include "controller/instances/worker_process.h"
#include "ipc/cache_messages.h"

namespace scalws::controller {

class InstanceResources {
 public:
  // `log_dir` "": the instance has no log files (its workers' error lines go to the
  // controller's log only).
  InstanceResources(const std::string& log_dir, const std::string& instance);

  // Opens the log files for `site` (its access_log = false has no access.log); ok without a
  // log directory.
  common::Status openLogs(const common::config::SiteConfig& site);
  void closeLogs();
  bool hasLogs() const { return logs_ != nullptr; }
  // Reopens both log files under their names (after a rotation).
  common::Status reopenLogs();
  // A copy of the access log's fd for a worker (invalid when there is none).
  common::Result<common::UniqueFd> duplicateAccessLog() const;
  // Where a worker's error lines go (null without log files): it writes to error.log and
  // keeps the files alive for as long as a worker may still call it.
  std::function<void(const std::string&)> errorLineSink() const;

  // A run begins on `caches` (made at start, or taken back by a re-attach).
  void begin(InstanceCaches caches);
  // The run ended: areas dropped, figures forgotten, log files closed.
  void end();
  // Whether the areas in force serve `site` as they are (a reload may keep them).
  bool cachesFit(const common::config::SiteConfig& site) const { return caches_.fits(site); }
  // Before a spawn: areas made anew for `site` when it needs some and none are held (they
  // could not be taken back from the workers a re-attach refused).
  common::Status ensureCaches(const common::config::SiteConfig& site);
  // Copies of the areas and of the access log into `launch`, for a new worker.
  common::Status handTo(WorkerLaunch& launch) const;

  // A worker's report of the caches' sizes: kept when it names `site`'s caches in order
  // (the areas are shared, so any worker's figures are the instance's; a worker cannot add
  // caches to what show lists), else ignored.
  void takeFigures(std::vector<ipc::CacheFigures>&& figures,
                   const common::config::SiteConfig& site);
  // As a worker last reported them (empty before any report, or when none run).
  const std::vector<ipc::CacheFigures>& cacheFigures() const { return figures_; }

 private:
  InstanceCaches caches_;
  std::vector<ipc::CacheFigures> figures_;
  // Shared with the workers' error-line callbacks, which may outlive a run.
  std::shared_ptr<InstanceLogFiles> logs_;
};

}  // namespace scalws::controller
