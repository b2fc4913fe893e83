#include "controller/instances/instance_caches.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/cache/shared_area.h"
#include "common/limits/limit_table.h"
#include "controller/instances/worker_probe.h"

namespace scalws::controller {

using common::Result;
using common::UniqueFd;
using common::config::CacheConfig;
using common::config::SiteConfig;

namespace {

// The memfd's name, as /proc shows it ("/memfd:scalws-cache:pages (deleted)").
std::string areaName(const std::string& cache) {
  return "scalws-cache:" + cache;
}

const CacheConfig* findCache(const SiteConfig& site, const std::string& name) {
  for (const CacheConfig& c : site.caches) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

common::Status checkArea(int fd, const CacheConfig& config) {
  char link[64];
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(self.c_str(), link, sizeof(link) - 1);
  std::string expected = "/memfd:" + areaName(config.name);
  if (n < 0 ||
      std::string_view(link, static_cast<size_t>(n)).substr(0, expected.size()) != expected) {
    return common::invalidArgument("cache." + config.name + ": not the controller's memfd");
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) return common::errnoStatus(errno, "cache." + config.name + ": fstat");
  if (static_cast<uint64_t>(st.st_size) != common::cache::layoutFor(config.memory).total_size) {
    return common::invalidArgument("cache." + config.name + ": its size does not fit its memory");
  }
  return common::okStatus();
}

// The limit table's memfd, as /proc shows it (worker/limits/shared_limits.h names it so).
constexpr const char* kLimitMemfdName = "scalws-limits";

common::Status checkLimitArea(int fd, uint64_t bytes) {
  char link[64];
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(self.c_str(), link, sizeof(link) - 1);
  std::string expected = std::string("/memfd:") + kLimitMemfdName;
  if (n < 0 ||
      std::string_view(link, static_cast<size_t>(n)).substr(0, expected.size()) != expected) {
    return common::invalidArgument("the limit table: not the controller's memfd");
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) return common::errnoStatus(errno, "the limit table: fstat");
  if (static_cast<uint64_t>(st.st_size) != common::limits::limitLayoutFor(bytes).total_size) {
    return common::invalidArgument("the limit table: its size does not fit limit_table");
  }
  return common::okStatus();
}

}  // namespace

Result<InstanceCaches> InstanceCaches::make(const SiteConfig& site) {
  InstanceCaches out;
  for (const CacheConfig& config : site.caches) {
    Result<UniqueFd> fd =
        common::cache::SharedArea::create(areaName(config.name).c_str(), config.memory);
    if (!fd.ok()) {
      return common::Status(fd.status().code(),
                            "cache." + config.name + ": " + fd.status().message());
    }
    out.areas_.push_back(Area{config, std::move(fd).value()});
  }
  if (common::config::hasLimits(site)) {
    Result<UniqueFd> fd = common::limits::LimitTable::create(kLimitMemfdName, site.limit_table);
    if (!fd.ok()) return fd.status();
    out.limits_fd_ = std::move(fd).value();
    out.limits_bytes_ = site.limit_table;
  }
  return out;
}

Result<InstanceCaches> InstanceCaches::adoptFrom(int pidfd,
                                                 const std::vector<ipc::CacheAreaReport>& reported,
                                                 const SiteConfig& site) {
  size_t expected = site.caches.size() + (common::config::hasLimits(site) ? 1 : 0);
  if (reported.size() != expected) {
    return common::invalidArgument("it holds " + std::to_string(reported.size()) +
                                   " shared area(s) where the config has " +
                                   std::to_string(expected));
  }
  InstanceCaches out;
  for (const ipc::CacheAreaReport& r : reported) {
    if (r.name == ipc::kLimitAreaName) {
      if (out.limits_fd_.valid()) return common::invalidArgument("the limit table twice");
      Result<UniqueFd> copy = copyFdOf(pidfd, r.fd);
      if (!copy.ok()) return copy.status();
      common::Status checked = checkLimitArea(copy->get(), site.limit_table);
      if (!checked.ok()) return checked;
      out.limits_fd_ = std::move(copy).value();
      out.limits_bytes_ = site.limit_table;
      continue;
    }
    const CacheConfig* config = findCache(site, r.name);
    if (config == nullptr) return common::invalidArgument("cache." + r.name + " is not configured");
    for (const Area& a : out.areas_) {
      if (a.config.name == r.name) return common::invalidArgument("cache." + r.name + " twice");
    }
    Result<UniqueFd> copy = copyFdOf(pidfd, r.fd);
    if (!copy.ok()) return copy.status();
    common::Status checked = checkArea(copy->get(), *config);
    if (!checked.ok()) return checked;
    out.areas_.push_back(Area{*config, std::move(copy).value()});
  }
  // In the config's order, as make() gives them.
  InstanceCaches ordered;
  ordered.limits_fd_ = std::move(out.limits_fd_);
  ordered.limits_bytes_ = out.limits_bytes_;
  for (const CacheConfig& config : site.caches) {
    for (Area& a : out.areas_) {
      if (a.config.name == config.name) ordered.areas_.push_back(std::move(a));
    }
  }
  return ordered;
}

bool InstanceCaches::fits(const SiteConfig& site) const {
  if (site.caches.size() != areas_.size()) return false;
  if (common::config::hasLimits(site) != limits_fd_.valid()) return false;
  if (limits_fd_.valid() && limits_bytes_ != site.limit_table) return false;
  for (size_t i = 0; i < areas_.size(); ++i) {
    if (!common::config::sameCacheStorage(areas_[i].config, site.caches[i])) return false;
  }
  return true;
}

bool InstanceCaches::sameAreas(const InstanceCaches& other) const {
  if (areas_.size() != other.areas_.size()) return false;
  if (limits_fd_.valid() != other.limits_fd_.valid()) return false;
  auto same = [](int x, int y) {
    struct stat a, b;
    return ::fstat(x, &a) == 0 && ::fstat(y, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
  };
  for (size_t i = 0; i < areas_.size(); ++i) {
    if (!same(areas_[i].fd.get(), other.areas_[i].fd.get())) return false;
  }
  return !limits_fd_.valid() || same(limits_fd_.get(), other.limits_fd_.get());
}

std::vector<std::string> InstanceCaches::names() const {
  std::vector<std::string> out;
  for (const Area& a : areas_) out.push_back(a.config.name);
  if (limits_fd_.valid()) out.emplace_back(ipc::kLimitAreaName);
  return out;
}

Result<std::vector<UniqueFd>> InstanceCaches::duplicateFds() const {
  std::vector<UniqueFd> out;
  for (const Area& a : areas_) {
    int copy = ::fcntl(a.fd.get(), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return common::errnoStatus(errno, "cache." + a.config.name + ": dup");
    out.emplace_back(copy);
  }
  if (limits_fd_.valid()) {
    int copy = ::fcntl(limits_fd_.get(), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return common::errnoStatus(errno, "the limit table: dup");
    out.emplace_back(copy);
  }
  return out;
}

}  // namespace scalws::controller
