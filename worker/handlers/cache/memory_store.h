// The memory tier: the operations every worker process of an instance runs on the shared
// mapping (common/cache/shared_area.h), safe from any thread of any of them.
//
// - lookup() finds the stored entry for a primary key whose secondary key (Vary) fits the
//   request, copies its meta (header..head, stored_entry.h) out under the lock, and either
//   copies its body too (small entries: nothing stays referenced) or pins the entry and
//   returns views of its body in the blocks. A pinned entry is never freed or reused: a
//   removal only unlinks it, and the last unpin frees it. Pins are counted per process
//   (here) and marked per process slot in the descriptor, so the pins of a process that
//   died are dropped by whoever notices it died.
// - Fills: beginFill() takes the fill lock of a key (a kFilling descriptor in the key's
//   chain, which collapses concurrent misses in every process onto one upstream request);
//   the filler appends the entry's bytes (blocks taken from the free list, the least
//   recently used unpinned entries evicted to make room) without the lock, and commit()
//   publishes it in one step, superseding the entries it replaces. A fill never becomes
//   visible half-written: a filler that dies leaves a kFilling descriptor that is dropped
//   when its death is noticed, and waiters then take the fill over.
// - Removals by URI (purge, invalidation), by URI prefix, or all.
//
// The lock is taken with a short spin first, so a hit on an uncontended index costs no
// system call. The mapping is untrusted: all reads are bounds-checked, and an index found
// inconsistent is rebuilt (repair()), never followed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/cache/shared_area.h"
#include "common/status.h"
#include "worker/handlers/cache/stored_entry.h"

namespace scalws::worker::cache {

// The shared mapping's layout (common/cache/shared_area.h), which this store works on.
using common::cache::AreaHeader;
using common::cache::AreaLayout;
using common::cache::Descriptor;
using common::cache::DescriptorState;
using common::cache::kBlockSize;
using common::cache::kDoomed;
using common::cache::kInKeyChain;
using common::cache::kInLru;
using common::cache::kInUriChain;
using common::cache::kProcessSlots;
using common::cache::layoutFor;
using common::cache::ProcessSlot;
using common::cache::SharedArea;

// Decides whether a stored entry's secondary key fits the request being answered.
class VaryMatcher {
 public:
  virtual bool matches(std::string_view stored_vary) const = 0;

 protected:
  ~VaryMatcher() = default;
};

class MemoryStore {
 public:
  struct Pin {
    uint32_t index = 0;  // 0: none
    uint64_t generation = 0;
  };
  struct Hit {
    std::string meta;  // header..head of the entry
    // `meta` as the lookup parsed and checked it, viewing `meta` (valid while it is not
    // changed or moved): a hit is parsed once.
    EntryView view;
    std::string body;  // the body, when it was copied
    Pin pin;           // else the entry is pinned, and `segments` view its body
    std::vector<std::string_view> segments;
  };
  enum class Found {
    kMiss,      // nothing for this key
    kVaryMiss,  // entries for this key, none for this request's secondary key
    kHit,       // `hit` is filled
  };
  struct LookupResult {
    Found found = Found::kMiss;
    bool filling = false;  // a fill of this key is under way in a live process
    // Ready entries with this key's hash the walk saw (whatever their key): beginFill()
    // compares it, so an entry published between the two calls is looked up, not refilled.
    uint32_t ready_seen = 0;
  };
  struct Fill {
    uint32_t index = 0;  // 0: no fill
    uint64_t generation = 0;
    uint64_t written = 0;
    uint64_t reserved = 0;  // bytes the blocks taken so far hold
    // beginFill() refused because the key's ready entries changed since the lookup.
    bool entry_changed = false;
  };
  struct Stats {
    uint64_t entries = 0;
    uint64_t entry_bytes = 0;
    uint64_t blocks_total = 0;
    uint64_t blocks_free = 0;
    uint64_t repairs = 0;
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t stale_served = 0;
    uint64_t revalidations = 0;
    uint64_t bytes_served = 0;
    uint64_t evictions = 0;
  };

  // Maps the area in `fd` (SharedArea::create() for `memory`) and claims a process slot,
  // held until the store is destroyed. Call on the thread that outlives the others (a
  // robust mutex belongs to the thread that locked it).
  static common::Result<std::unique_ptr<MemoryStore>> open(int fd, uint64_t memory,
                                                           uint64_t max_entry);
  ~MemoryStore();
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  // The entry for `key` (hash `key_hash`) that `matcher` accepts, the most recently stored
  // first. Bodies up to `copy_limit` bytes are copied into hit.body; larger ones pinned.
  // `now_ms` (CLOCK_MONOTONIC) marks the entry used.
  LookupResult lookup(uint64_t key_hash, std::string_view key, const VaryMatcher& matcher,
                      size_t copy_limit, int64_t now_ms, Hit& hit);
  void unpin(const Pin& pin);

  // Takes the fill lock of `key_hash`; false when a live fill of it is under way, or
  // (fill.entry_changed) when `ready_seen` is given and no longer what lookup() saw: the
  // fill that held the lock was published meanwhile, so look again instead of refilling.
  // `uri_hash` lets a purge of the URI doom the fill.
  static constexpr uint32_t kAnyReady = UINT32_MAX;
  bool beginFill(uint64_t key_hash, uint64_t uri_hash, int64_t now_ms, Fill& fill,
                 uint32_t ready_seen = kAnyReady);
  // Makes sure `total` bytes fit the fill (blocks taken now, evicting if needed). False
  // when they cannot: over max_entry, or too much pinned.
  bool reserve(Fill& fill, uint64_t total);
  // Appends the entry's bytes in order. False as reserve().
  bool append(Fill& fill, std::string_view bytes, int64_t now_ms);
  // Rewrites bytes already appended (the header once the body length is known).
  bool overwrite(const Fill& fill, uint64_t offset, std::string_view bytes);
  // Publishes the entry (its bytes must be a whole entry of fill.written bytes); removes
  // the ready entries of the same key and secondary key it replaces. False when the fill
  // was lost meanwhile (a repair, a purge of everything); the fill is over either way.
  bool commit(Fill& fill, uint64_t uri_hash, int64_t now_ms);
  void abandon(Fill& fill);

  // Removes every entry of this URI; returns how many.
  size_t removeUri(uint64_t uri_hash, std::string_view uri);
  // Removes the entries whose URI starts with `prefix` (all of them when it is empty).
  size_t removePrefix(std::string_view prefix);

  // Upkeep, at most once a second per instance whoever calls it: entries unused for
  // `inactive_ms` evicted, dead processes' pins and fills dropped.
  void sweep(int64_t now_ms, uint64_t inactive_ms);

  Stats stats() const;
  AreaHeader& header() const { return area_.header(); }
  // Checks the whole index and rebuilds it (what a lock found EOWNERDEAD does).
  void repairForTest();
  uint32_t slotForTest() const { return slot_; }

 private:
  // The index lock for one operation; false when the lock is beyond recovery (then the
  // cache answers nothing and stores nothing).
  class Locked {
   public:
    explicit Locked(MemoryStore& store) : store_(store), held_(store.lockIndex()) {}
    ~Locked() {
      if (held_) store_.unlockIndex();
    }
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;
    explicit operator bool() const { return held_; }

   private:
    MemoryStore& store_;
    bool held_;
  };
  MemoryStore(SharedArea area, uint64_t max_entry);

  // memory_store_upkeep.cpp
  bool lockIndex();  // false: the lock is beyond recovery
  void unlockIndex();
  common::Status claimSlot();
  void releaseSlot();
  bool slotAlive(uint32_t slot);  // under the lock
  void reapSlot(uint32_t slot);   // under the lock: its pins and fills dropped
  void repair();                  // under the lock
  // Under the lock: evicts least recently used unpinned entries until `blocks` blocks and a
  // descriptor are free. False when they cannot be.
  bool evictFor(uint32_t blocks);
  void evict(uint32_t index);
  void freeDescriptor(uint32_t index);
  void unlinkEverywhere(uint32_t index);
  void remove(uint32_t index);  // unlink; free unless pinned

  // memory_store.cpp
  bool validIndex(uint32_t index) const { return index >= 1 && index <= descriptor_count_; }
  bool pinned(const Descriptor& d) const;
  bool readEntry(const Descriptor& d, uint64_t offset, uint64_t length, std::string& out) const;
  bool entryMeta(const Descriptor& d, std::string& out) const;
  // parseEntryMeta(meta), remembered per descriptor: meta bytes equal to the ones last
  // parsed for `index` parse the same (a pure function of the bytes), so a hit on a known
  // entry costs a memcmp, not a parse. The bytes are compared, never trusted: the area is
  // shared with every process of the instance.
  common::Result<EntryView> parseMeta(uint32_t index, const std::string& meta);
  bool sameEntry(uint32_t a_index, std::string_view b_meta);
  bool takeBlocks(Fill& fill, uint32_t count);
  void lruPushFront(uint32_t index);
  void lruUnlink(uint32_t index);
  uint32_t bucketOf(uint64_t hash) const {
    return static_cast<uint32_t>(hash & (bucket_count_ - 1));
  }

  SharedArea area_;
  uint32_t slot_ = kProcessSlots;  // ours, 0-based; kProcessSlots until claimed
  uint32_t descriptor_count_ = 0;
  uint32_t block_count_ = 0;
  uint32_t bucket_count_ = 0;
  uint64_t max_entry_ = 0;
  bool repair_needed_ = false;  // a check failed under the lock: repair before unlocking
  // Pins this process holds, per descriptor (guarded by the area's lock).
  std::vector<uint32_t> pin_counts_;
  std::vector<uint64_t> pin_generations_;  // the descriptor generation each count is for
  std::string scratch_;
  struct ParsedMeta {
    uint32_t index = 0;  // 0: empty
    std::string bytes;
    EntryView view;  // viewing `bytes`
  };
  static constexpr size_t kParsedMetaSlots = 64;
  std::vector<ParsedMeta> parsed_;  // kParsedMetaSlots, by descriptor index
};

}  // namespace scalws::worker::cache
