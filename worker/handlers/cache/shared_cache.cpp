#include "worker/handlers/cache/shared_cache.h"

#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "common/log.h"
#include "worker/handlers/cache/hash64.h"

namespace scalws::worker::cache {
namespace {

// This process's pid without a system call per request (glibc's getpid() makes one):
// read once, and again in a child after a fork.
std::atomic<pid_t> g_pid{0};

pid_t currentPid() {
  static const bool registered = [] {
    g_pid = ::getpid();
    pthread_atfork(nullptr, nullptr, [] { g_pid = ::getpid(); });
    return true;
  }();
  (void)registered;
  return g_pid.load(std::memory_order_relaxed);
}

}  // namespace

common::Result<std::shared_ptr<SharedCache>> SharedCache::create(
    const common::config::CacheConfig& config) {
  std::string name = "scalws-cache:" + config.name;
  common::Result<common::UniqueFd> fd = SharedArea::create(name.c_str(), config.memory);
  if (!fd.ok()) return fd.status();
  return std::shared_ptr<SharedCache>(new SharedCache(config, std::move(fd).value()));
}

std::shared_ptr<SharedCache> SharedCache::adopt(const common::config::CacheConfig& config,
                                                common::UniqueFd fd) {
  return std::shared_ptr<SharedCache>(new SharedCache(config, std::move(fd)));
}

SharedCache::~SharedCache() {
  disk_.reset();
  // A store attached by this process goes with it; in a parent that never attached (or a
  // child that inherited the object after the parent attached) there is none of ours.
  if (attached_pid_ != currentPid()) (void)store_.release();
}

common::Status SharedCache::prepareDisk(const std::string& user) {
  if (config_.disk.empty() || disk_fd_) return common::okStatus();
  common::Result<common::UniqueFd> fd = DiskStore::openDirectory(config_.disk);
  if (!fd.ok()) return fd.status();
  if (::geteuid() == 0 && !user.empty() && user != "root") {
    // The workers write here after dropping to the site's user.
    if (const passwd* pw = ::getpwnam(user.c_str())) {
      int dir = fd->get();
      if (::fchown(dir, pw->pw_uid, pw->pw_gid) != 0 ||
          ::fchownat(dir, "tmp", pw->pw_uid, pw->pw_gid, 0) != 0) {
        return common::errnoStatus(errno, "cache directory \"" + config_.disk + "\": chown");
      }
    }
  }
  disk_fd_ = std::move(fd).value();
  return common::okStatus();
}

MemoryStore* SharedCache::store() {
  std::lock_guard<std::mutex> lock(mutex_);
  pid_t pid = currentPid();
  if (store_ != nullptr) return attached_pid_ == pid ? store_.get() : nullptr;
  if (attach_failed_) return nullptr;
  common::Result<std::unique_ptr<MemoryStore>> s =
      MemoryStore::open(area_fd_.get(), config_.memory, config_.max_entry);
  if (!s.ok()) {
    attach_failed_ = true;
    LOG_ERROR("cache %s: %s; answering without it", config_.name.c_str(),
              s.status().message().c_str());
    return nullptr;
  }
  store_ = std::move(s).value();
  attached_pid_ = pid;
  return store_.get();
}

DiskWorker* SharedCache::disk() {
  MemoryStore* memory = store();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!disk_fd_ || memory == nullptr) return nullptr;
  if (disk_ == nullptr) {
    int copy = ::fcntl(disk_fd_.get(), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return nullptr;
    auto disk_store = std::make_unique<DiskStore>(common::UniqueFd(copy), config_.max_disk,
                                                  config_.max_entry, memory->header().disk_bytes);
    disk_ = std::make_unique<DiskWorker>(std::move(disk_store), memory->header().disk_scanned);
  }
  return disk_.get();
}

void SharedCache::purge(PurgeScope scope, const std::string& target,
                        std::function<void(PurgeCounts)> done) {
  PurgeCounts counts;
  MemoryStore* memory = store();
  if (memory != nullptr) {
    counts.memory_entries = scope == PurgeScope::kUrl
                                ? memory->removeUri(hash64(target), target)
                                : memory->removePrefix(scope == PurgeScope::kAll ? "" : target);
  }
  DiskWorker* disk_worker = disk();
  if (disk_worker == nullptr) return done(counts);
  std::function<bool(std::string_view)> match;  // null: every file
  if (scope == PurgeScope::kUrl) {
    match = [target](std::string_view uri) { return uri == target; };
  } else if (scope == PurgeScope::kPrefix) {
    match = [target](std::string_view uri) { return uri.starts_with(target); };
  }
  disk_worker->removeMatching(std::move(match),
                              [counts, done = std::move(done)](size_t files) mutable {
                                counts.disk_files = files;
                                done(counts);
                              });
}

CacheSize SharedCache::size() {
  CacheSize out;
  MemoryStore* memory = store();
  if (memory == nullptr) return out;
  MemoryStore::Stats stats = memory->stats();
  out.entries = stats.entries;
  out.memory_bytes = stats.entry_bytes;
  if (!config_.disk.empty()) {
    out.disk_bytes = memory->header().disk_bytes.load(std::memory_order_relaxed);
  }
  return out;
}

common::Result<std::shared_ptr<CacheSet>> CacheSet::forSite(const common::config::SiteConfig& site,
                                                            const CacheSet* previous,
                                                            const std::string& user) {
  auto set = std::make_shared<CacheSet>();
  for (const common::config::CacheConfig& config : site.caches) {
    std::shared_ptr<SharedCache> kept = previous != nullptr ? previous->find(config.name) : nullptr;
    if (kept != nullptr && common::config::sameCacheStorage(kept->config(), config)) {
      set->caches_[config.name] = kept;
      continue;
    }
    common::Result<std::shared_ptr<SharedCache>> made = SharedCache::create(config);
    if (!made.ok()) return made.status();
    common::Status disk = (*made)->prepareDisk(user);
    if (!disk.ok()) {
      return common::invalidArgument(config.where.toString() + ": cache." + config.name + ": " +
                                     disk.message());
    }
    set->caches_[config.name] = std::move(made).value();
  }
  if (common::config::hasLimits(site)) {
    if (previous != nullptr && previous->limits_ != nullptr &&
        previous->limits_->bytes() == site.limit_table) {
      set->limits_ = previous->limits_;
    } else {
      common::Result<std::shared_ptr<limits::SharedLimits>> made =
          limits::SharedLimits::create(site.limit_table);
      if (!made.ok()) return made.status();
      set->limits_ = std::move(made).value();
    }
  }
  return set;
}

std::shared_ptr<SharedCache> CacheSet::find(const std::string& name) const {
  auto it = caches_.find(name);
  return it == caches_.end() ? nullptr : it->second;
}

}  // namespace scalws::worker::cache
