#include "controller/instances/instance_resources.h"

#include <utility>

namespace scalws::controller {

using common::Result;
using common::Status;

InstanceResources::InstanceResources(const std::string& log_dir, const std::string& instance) {
  if (!log_dir.empty()) logs_ = std::make_shared<InstanceLogFiles>(log_dir, instance);
}

Status InstanceResources::openLogs(const common::config::SiteConfig& site) {
  if (!logs_) return common::okStatus();
  return logs_->open(common::config::serverOrDefaults(site).instance_access_log);
}

void InstanceResources::closeLogs() {
  if (logs_) logs_->close();
}

Status InstanceResources::reopenLogs() {
  if (!logs_) return Status(common::StatusCode::kFailedPrecondition, "no log directory");
  return logs_->reopen();
}

Result<common::UniqueFd> InstanceResources::duplicateAccessLog() const {
  if (!logs_) return common::UniqueFd();
  return logs_->duplicateAccess();
}

std::function<void(const std::string&)> InstanceResources::errorLineSink() const {
  if (!logs_) return nullptr;
  return [logs = logs_](const std::string& line) { logs->writeError(line); };
}

void InstanceResources::begin(InstanceCaches caches) {
  caches_ = std::move(caches);
  figures_.clear();
}

void InstanceResources::end() {
  caches_ = InstanceCaches();
  figures_.clear();
  closeLogs();
}

Status InstanceResources::ensureCaches(const common::config::SiteConfig& site) {
  if (!caches_.empty() || (site.caches.empty() && !common::config::hasLimits(site))) {
    return common::okStatus();
  }
  SCALWS_ASSIGN_OR_RETURN(caches_, InstanceCaches::make(site));
  return common::okStatus();
}

Status InstanceResources::handTo(WorkerLaunch& launch) const {
  SCALWS_ASSIGN_OR_RETURN(launch.cache_fds, caches_.duplicateFds());
  launch.cache_names = caches_.names();
  if (!logs_) return common::okStatus();
  SCALWS_ASSIGN_OR_RETURN(launch.access_log, logs_->duplicateAccess());
  return common::okStatus();
}

void InstanceResources::takeFigures(std::vector<ipc::CacheFigures>&& figures,
                                    const common::config::SiteConfig& site) {
  if (figures.empty() || figures.size() != site.caches.size()) return;
  for (size_t i = 0; i < figures.size(); ++i) {
    if (figures[i].name != site.caches[i].name) return;
  }
  figures_ = std::move(figures);
}

}  // namespace scalws::controller
