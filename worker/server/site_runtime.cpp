#include "worker/server/site_runtime.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/config/config_loader.h"
#include "common/log.h"
#include "worker/access_log.h"
#include "worker/server/worker_sandbox.h"

namespace scalws::worker {

using common::Result;

namespace {

Result<SiteRuntime> prepare(Result<common::config::SiteConfig> config, const SiteRuntime* current) {
  if (!config.ok()) return config.status();
  const common::config::ServerConfig& server = common::config::serverOrDefaults(*config);
  auto caches = cache::CacheSet::forSite(
      *config, current != nullptr ? current->caches.get() : nullptr, effectiveWorkerUser(server));
  if (!caches.ok()) return caches.status();
  auto snapshot = ConfigSnapshot::build(std::move(config).value(), {}, caches->get());
  if (!snapshot.ok()) return snapshot.status();

  SiteRuntime runtime;
  runtime.snapshot = std::move(snapshot).value();
  runtime.caches = std::move(caches).value();
  const std::string& log_path = runtime.snapshot->server().access_log;
  if (!log_path.empty()) {
    if (current != nullptr && current->access_log_fd >= 0 &&
        current->snapshot->server().access_log == log_path) {
      runtime.access_log_fd = ::dup(current->access_log_fd);
    } else {
      Result<int> fd = openAccessLogFile(log_path);
      if (!fd.ok()) return fd.status();
      runtime.access_log_fd = *fd;
    }
  }
  return runtime;
}

}  // namespace

Result<SiteRuntime> prepareSite(const std::string& path, const SiteRuntime* current) {
  return prepare(common::config::loadSiteConfigFile(path), current);
}

Result<SiteRuntime> prepareSiteFromText(const std::string& text, const std::string& path,
                                        const SiteRuntime* current) {
  return prepare(common::config::loadSiteConfigString(text, path), current);
}

common::Status applyErrorLogSettings(const common::config::ServerConfig& server) {
  Result<common::log::Level> level = common::log::parseLevel(server.log_level);
  if (!level.ok()) return level.status();
  common::log::setLevel(*level);
  if (!server.error_log.empty()) {
    int fd = ::open(server.error_log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0) return common::errnoStatus(errno, "cannot open error log " + server.error_log);
    int old = common::log::fd();
    common::log::setFd(fd);
    if (old > 2) ::close(old);
  }
  return common::okStatus();
}

common::Status reopenLogFiles(const common::config::ServerConfig& server, int access_log_fd) {
  common::Status first = common::okStatus();
  auto swap = [&](const std::string& path, int in_force) {
    if (path.empty() || in_force < 0) return;
    Result<int> fd = openAccessLogFile(path);  // O_APPEND | O_CREAT, 0640
    if (!fd.ok()) {
      if (first.ok()) first = fd.status();
      return;
    }
    if (::dup3(*fd, in_force, O_CLOEXEC) < 0 && first.ok()) {
      first = common::errnoStatus(errno, "cannot reopen " + path);
    }
    ::close(*fd);
  };
  swap(server.access_log, access_log_fd);
  int error_fd = common::log::fd();
  swap(server.error_log, error_fd > 2 ? error_fd : -1);  // stderr is not ours to reopen
  return first;
}

bool sameListeners(const common::config::SiteConfig& a, const common::config::SiteConfig& b) {
  if (a.listens.size() != b.listens.size()) return false;
  for (size_t i = 0; i < a.listens.size(); ++i) {
    const auto& x = a.listens[i];
    const auto& y = b.listens[i];
    if (x.host != y.host || x.port != y.port || x.tls.has_value() != y.tls.has_value() ||
        x.http2 != y.http2 || x.http3 != y.http3) {
      return false;
    }
  }
  return true;
}

}  // namespace scalws::worker
