#include "worker/handlers/static/open_file_cache.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "worker/loop/worker_loop.h"

namespace scalws::worker {
namespace {

bool isMissing(int err) {
  return err == ENOENT || err == ENOTDIR;
}

}  // namespace

OpenFileCache::Limits OpenFileCache::defaultLimits() {
  Limits limits;
  rlimit rl{};
  size_t fds = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    fds = rl.rlim_cur == RLIM_INFINITY ? (1u << 20) : static_cast<size_t>(rl.rlim_cur);
  }
  // An eighth of the fd limit per loop leaves room for connections, upstreams and other
  // loops of a "single" process; EMFILE still makes the cache shed entries (openFresh).
  limits.max_entries = std::clamp<size_t>(fds / 8, 32, 4096);
  return limits;
}

OpenFileCache::OpenFileCache(WorkerLoop& loop) : OpenFileCache(defaultLimits()) {
  counters_ = &loop.counters();
}

OpenFileCache::OpenFileCache(Limits limits) : limits_(limits) {
  if (limits_.max_entries == 0) limits_.max_entries = 1;
  entries_.reserve(limits_.max_entries);
  scratch_.reserve(256);
}

OpenFileCache::~OpenFileCache() {
  clear();
}

void OpenFileCache::clear() noexcept {
  while (lru_tail_ != nullptr) remove(lru_tail_);
}

void OpenFileCache::buildKey(const FileLookup& lookup) {
  scratch_.assign(lookup.scope);
  scratch_.push_back(lookup.variant ? 'v' : 'f');
  path_offset_ = scratch_.size();
  if (lookup.path.empty() && lookup.suffix.empty()) {
    scratch_.push_back('.');
  } else {
    scratch_.append(lookup.path);
    scratch_.append(lookup.suffix);
  }
}

FileResult OpenFileCache::acquire(const FileLookup& lookup) noexcept {
  using Mode = common::config::OpenFileCacheConfig::Mode;
  buildKey(lookup);
  if (lookup.policy.mode == Mode::kOff) return openFresh(lookup, false);

  auto it = entries_.find(std::string_view(scratch_));
  if (it != entries_.end()) {
    OpenFile* f = it->second;
    bool usable;
    if (lookup.policy.mode == Mode::kValid &&
        lookup.now_ms - f->checked_at_ms_ < lookup.policy.valid_for) {
      usable = true;
    } else if (lookup.turn != 0 && f->checked_turn_ == lookup.turn) {
      usable = true;  // checked (or opened) earlier in this same turn
    } else {
      // check: the one syscall of a hit.
      FileIdentity now;
      if (lookup.root->statPath(f->relativePath(), now)) {
        usable = !f->missing() && now == f->identity();
      } else {
        usable = f->missing() && isMissing(errno);
      }
      if (usable) {
        f->checked_at_ms_ = lookup.now_ms;
        f->checked_turn_ = lookup.turn;
      }
    }
    if (usable) {
      if (counters_ != nullptr) counters_->file_cache_hits.add();
      touch(f);
      if (f->missing()) return FileResult{nullptr, ENOENT};
      f->retain();
      return FileResult{f, 0};
    }
    remove(f);
  }
  if (counters_ != nullptr) counters_->file_cache_misses.add();
  return openFresh(lookup, true);
}

FileResult OpenFileCache::openFresh(const FileLookup& lookup, bool cacheable) noexcept {
  const char* path = scratch_.c_str() + path_offset_;
  int fd = lookup.root->openFile(path);
  if (fd < 0 && (errno == EMFILE || errno == ENFILE) && !entries_.empty()) {
    // Out of fds: shed a quarter of the cache (its unused fds close now) and retry once.
    evictOldest(std::max<size_t>(1, entries_.size() / 4));
    fd = lookup.root->openFile(path);
  }
  if (fd < 0) {
    int err = errno;
    if (cacheable && lookup.remember_missing && isMissing(err)) {
      auto* negative = new OpenFile(scratch_, path_offset_, -1, FileIdentity{});
      negative->checked_at_ms_ = lookup.now_ms;
      negative->checked_turn_ = lookup.turn;
      insert(negative);
    }
    return FileResult{nullptr, err};
  }
  FileIdentity id;
  if (!DocRoot::statFd(fd, id)) {
    int err = errno;
    ::close(fd);
    return FileResult{nullptr, err};
  }
  if (!id.isRegular()) {
    ::close(fd);
    return FileResult{nullptr, id.isDirectory() ? EISDIR : ENODEV};
  }
  auto* f = new OpenFile(scratch_, path_offset_, fd, id);
  if (!cacheable) return FileResult{f, 0};  // the caller's reference is the only one

  if (id.size <= limits_.keep_file_max && id.size <= limits_.max_kept_bytes) {
    while (kept_bytes_ + id.size > limits_.max_kept_bytes && lru_tail_ != nullptr) {
      evictOldest(1);
    }
    f->keepBytes();
  }
  f->checked_at_ms_ = lookup.now_ms;
  f->checked_turn_ = lookup.turn;
  insert(f);
  f->retain();
  return FileResult{f, 0};
}

void OpenFileCache::insert(OpenFile* f) noexcept {
  if (entries_.size() >= limits_.max_entries)
    evictOldest(entries_.size() + 1 - limits_.max_entries);
  entries_.emplace(f->key(), f);
  f->in_cache_ = true;
  f->lru_prev_ = nullptr;
  f->lru_next_ = lru_head_;
  if (lru_head_ != nullptr) lru_head_->lru_prev_ = f;
  lru_head_ = f;
  if (lru_tail_ == nullptr) lru_tail_ = f;
  kept_bytes_ += f->bytes().size();
}

void OpenFileCache::remove(OpenFile* f) noexcept {
  entries_.erase(f->key());
  if (f->lru_prev_ != nullptr) {
    f->lru_prev_->lru_next_ = f->lru_next_;
  } else {
    lru_head_ = f->lru_next_;
  }
  if (f->lru_next_ != nullptr) {
    f->lru_next_->lru_prev_ = f->lru_prev_;
  } else {
    lru_tail_ = f->lru_prev_;
  }
  f->lru_prev_ = f->lru_next_ = nullptr;
  f->in_cache_ = false;
  kept_bytes_ -= f->bytes().size();
  f->release();  // the cache's reference; responses in flight keep theirs
}

void OpenFileCache::touch(OpenFile* f) noexcept {
  if (f == lru_head_) return;
  f->lru_prev_->lru_next_ = f->lru_next_;
  if (f->lru_next_ != nullptr) {
    f->lru_next_->lru_prev_ = f->lru_prev_;
  } else {
    lru_tail_ = f->lru_prev_;
  }
  f->lru_prev_ = nullptr;
  f->lru_next_ = lru_head_;
  lru_head_->lru_prev_ = f;
  lru_head_ = f;
}

void OpenFileCache::evictOldest(size_t count) noexcept {
  while (count-- > 0 && lru_tail_ != nullptr) remove(lru_tail_);
}

}  // namespace scalws::worker
