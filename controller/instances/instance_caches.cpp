#include "controller/instances/instance_caches.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/cache/shared_area.h"
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
  return out;
}

Result<InstanceCaches> InstanceCaches::adoptFrom(int pidfd,
                                                 const std::vector<ipc::CacheAreaReport>& reported,
                                                 const SiteConfig& site) {
  if (reported.size() != site.caches.size()) {
    return common::invalidArgument("it holds " + std::to_string(reported.size()) +
                                   " cache area(s) where the config has " +
                                   std::to_string(site.caches.size()));
  }
  InstanceCaches out;
  for (const ipc::CacheAreaReport& r : reported) {
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
  for (const CacheConfig& config : site.caches) {
    for (Area& a : out.areas_) {
      if (a.config.name == config.name) ordered.areas_.push_back(std::move(a));
    }
  }
  return ordered;
}

bool InstanceCaches::fits(const SiteConfig& site) const {
  if (site.caches.size() != areas_.size()) return false;
  for (size_t i = 0; i < areas_.size(); ++i) {
    if (!common::config::sameCacheStorage(areas_[i].config, site.caches[i])) return false;
  }
  return true;
}

bool InstanceCaches::sameAreas(const InstanceCaches& other) const {
  if (areas_.size() != other.areas_.size()) return false;
  for (size_t i = 0; i < areas_.size(); ++i) {
    struct stat a, b;
    if (::fstat(areas_[i].fd.get(), &a) != 0 || ::fstat(other.areas_[i].fd.get(), &b) != 0 ||
        a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> InstanceCaches::names() const {
  std::vector<std::string> out;
  for (const Area& a : areas_) out.push_back(a.config.name);
  return out;
}

Result<std::vector<UniqueFd>> InstanceCaches::duplicateFds() const {
  std::vector<UniqueFd> out;
  for (const Area& a : areas_) {
    int copy = ::fcntl(a.fd.get(), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return common::errnoStatus(errno, "cache." + a.config.name + ": dup");
    out.emplace_back(copy);
  }
  return out;
}

}  // namespace scalws::controller
