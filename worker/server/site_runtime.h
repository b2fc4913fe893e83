// What a standalone scalwsd prepares before it serves, and again on every reload: the
// config read and validated, the snapshot built, the logs opened.
#pragma once

#include <memory>
#include <string>

#include "common/config/site_config.h"
#include "common/status.h"
#include "worker/config_snapshot.h"
#include "worker/handlers/cache/shared_cache.h"

namespace scalws::worker {

struct SiteRuntime {
  std::shared_ptr<const ConfigSnapshot> snapshot;
  // The site's caches: made here, before any fork, so every worker process shares them;
  // a reload keeps the ones whose storage settings did not change.
  std::shared_ptr<cache::CacheSet> caches;
  int access_log_fd = -1;  // owned; -1 when the access log is off
};

// Loads `path`, builds the snapshot and opens the access log. On a reload pass the runtime
// in force: an unchanged access log path keeps its fd.
common::Result<SiteRuntime> prepareSite(const std::string& path, const SiteRuntime* current);
// The same from config text already read (`path` still names it in messages and anchors
// relative paths).
common::Result<SiteRuntime> prepareSiteFromText(const std::string& text, const std::string& path,
                                                const SiteRuntime* current);
// Applies [server] error_log and log_level to the process's error log.
common::Status applyErrorLogSettings(const common::config::ServerConfig& server);
// SIGUSR1: opens [server] access_log and error_log again under their names (logrotate
// renamed them) and puts each new file in place of the fd in force (`access_log_fd`, the
// error log's), with dup3: every loop's next write(2) goes to the new file, no thread hands
// anything over, and lines still buffered land there at their flush — none is lost. A
// file that cannot be opened leaves the old one in force (and is logged).
common::Status reopenLogFiles(const common::config::ServerConfig& server, int access_log_fd);

// True when both configs listen on the same addresses with the same options.
bool sameListeners(const common::config::SiteConfig& a, const common::config::SiteConfig& b);

}  // namespace scalws::worker
