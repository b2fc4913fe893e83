// One [cache.NAME] of a site as a process sees it: the config, the memfd of its memory tier
// (common/cache/shared_area.h) and, once the process serves, its own attachment to it (MemoryStore)
// and its disk thread (DiskWorker).
//
// Made by whoever starts the workers (CacheSet::forSite: the standalone master before it
// forks, a single-mode process for itself, an instance worker from the controller's fd)
// and inherited by the worker processes; a reload keeps the SharedCache of a cache whose
// memory and disk settings did not change, so its entries survive. A worker attaches on
// first use, after the fork, on the thread that uses it (a loop thread, which lives as
// long as the process); the parent never attaches.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/config/cache_config.h"
#include "common/config/site_config.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "worker/handlers/cache/disk_worker.h"
#include "worker/handlers/cache/memory_store.h"
#include "worker/limits/shared_limits.h"

namespace scalws::worker::cache {

// What a purge drops: the answers to one URL (every variant), to every URL starting with
// a prefix, or everything. URLs as the cache keys them: "https://shop.example/a?b=1".
enum class PurgeScope { kUrl, kPrefix, kAll };
struct PurgeCounts {
  uint64_t memory_entries = 0;
  uint64_t disk_files = 0;
};
// The cache's size as this process sees it (the tiers are the instance's, so every worker
// sees the same).
struct CacheSize {
  uint64_t entries = 0;
  uint64_t memory_bytes = 0;
  uint64_t disk_bytes = 0;
};

class SharedCache {
 public:
  // A new memory tier for `config` (memfd_create).
  static common::Result<std::shared_ptr<SharedCache>> create(
      const common::config::CacheConfig& config);
  // The memory tier made by someone else (the controller), passed as `fd`.
  static std::shared_ptr<SharedCache> adopt(const common::config::CacheConfig& config,
                                            common::UniqueFd fd);
  ~SharedCache();

  // Opens (making it when missing, owned by `user` when we are root) the disk tier's
  // directory: before the sandbox. A no-op without cache.disk.
  common::Status prepareDisk(const std::string& user);

  const common::config::CacheConfig& config() const { return config_; }
  int areaFd() const { return area_fd_.get(); }
  // This process's attachment, made on first use; null when it cannot be (logged once) or
  // when called in another process than the one that attached.
  MemoryStore* store();
  // This process's disk thread, started on first use; null without a disk tier.
  DiskWorker* disk();

  // Drops what `scope` and `target` name from the memory tier now and from the disk tier
  // on its thread; `done` gets the counts once both are done (here, without a disk tier;
  // else on the disk thread). Nothing is dropped when the store cannot be attached.
  void purge(PurgeScope scope, const std::string& target, std::function<void(PurgeCounts)> done);
  CacheSize size();

 private:
  SharedCache(common::config::CacheConfig config, common::UniqueFd area_fd)
      : config_(std::move(config)), area_fd_(std::move(area_fd)) {}

  common::config::CacheConfig config_;
  common::UniqueFd area_fd_;
  common::UniqueFd disk_fd_;
  std::mutex mutex_;
  pid_t attached_pid_ = 0;
  bool attach_failed_ = false;
  std::unique_ptr<MemoryStore> store_;
  std::unique_ptr<DiskWorker> disk_;
};

// The caches of one site by name, and its limit table (the site's shared areas: made
// together, by the same process, and passed to workers the same way).
class CacheSet {
 public:
  // Every [cache] of `site`, keeping those of `previous` whose memory and disk settings
  // are the same (a reload keeps their entries); the disk directories opened. With a
  // `limit` anywhere in the site, its limit table too, kept from `previous` when
  // limit_table is unchanged.
  static common::Result<std::shared_ptr<CacheSet>> forSite(const common::config::SiteConfig& site,
                                                           const CacheSet* previous,
                                                           const std::string& user);
  std::shared_ptr<SharedCache> find(const std::string& name) const;
  const std::map<std::string, std::shared_ptr<SharedCache>>& all() const { return caches_; }
  void add(const std::string& name, std::shared_ptr<SharedCache> cache) {
    caches_[name] = std::move(cache);
  }
  // Null when the site limits nothing.
  const std::shared_ptr<limits::SharedLimits>& limits() const { return limits_; }
  void setLimits(std::shared_ptr<limits::SharedLimits> table) { limits_ = std::move(table); }

 private:
  std::map<std::string, std::shared_ptr<SharedCache>> caches_;
  std::shared_ptr<limits::SharedLimits> limits_;
};

}  // namespace scalws::worker::cache
