// The memory tier's shared mapping: one memfd per [cache.NAME] of an instance, made by
// whoever starts the instance's workers (the standalone master before it forks, the
// controller, or a single-mode process for itself) and mapped by every worker process, so
// an entry one of them stored is a hit in all of them, the cache outlives a worker's
// restart, and no other instance ever holds the fd. It lives in common/ because the
// controller makes these areas too; only workers ever read or change one after create()
// (worker/handlers/cache/memory_store.h), and the controller never maps it again.
//
// Layout, fixed by cache.memory when the memfd is made (layoutFor()):
//
//   AreaHeader      one page: the layout's parameters, the index lock, free lists, LRU
//                   ends, counters
//   ProcessSlot[]   one per worker process attached (kProcessSlots), each with a robust
//                   mutex its process holds for life: a slot whose owner died is found
//                   by trylock (EOWNERDEAD), its pins released and fills abandoned
//   key buckets     u32[bucket_count]: chains of descriptors by primary key hash
//   uri buckets     u32[bucket_count]: chains of stored entries by URI hash
//   block_next      u32[block_count]: the chain of blocks of each entry
//   Descriptor[]    one per entry (filling, ready, or removed but still pinned)
//   blocks          block_count blocks of kBlockSize: the entries' bytes (stored_entry.h)
//
// Indices in chains are 1-based (0 ends a chain). Everything but the blocks' contents
// changes only under the header's lock, a robust process-shared mutex held for short index
// operations; a worker SIGKILLed while holding it leaves it EOWNERDEAD, and the next
// locker rebuilds the index from the descriptors before going on (repair()). A reader
// trusts nothing it finds: every index and length is checked before use, and a bad one
// triggers the same repair.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::common::cache {

inline constexpr uint64_t kAreaMagic = 0x3141455241435753ull;  // "SWCAREA1"
inline constexpr uint32_t kAreaVersion = 1;
inline constexpr size_t kBlockSize = 4096;
inline constexpr size_t kProcessSlots = 256;
inline constexpr size_t kPinWords = kProcessSlots / 64;
inline constexpr size_t kPageSize = 4096;

enum class DescriptorState : uint32_t { kFree = 0, kFilling = 1, kReady = 2, kRemoved = 3 };
// Descriptor::flags: which lists it is linked into, and whether a fill was given up on by
// others (purged while filling, or stalled): its filler finds it doomed and drops it.
inline constexpr uint32_t kInKeyChain = 1;
inline constexpr uint32_t kInUriChain = 2;
inline constexpr uint32_t kInLru = 4;
inline constexpr uint32_t kDoomed = 8;

struct Descriptor {
  uint32_t state;        // DescriptorState
  uint32_t filler_slot;  // kFilling: the process slot writing it
  uint32_t key_next;     // 1-based, 0: end of chain
  uint32_t uri_next;
  uint32_t lru_prev;
  uint32_t lru_next;
  uint32_t first_block;  // 1-based; 0: no block yet
  uint32_t last_block;
  uint32_t block_count;
  uint32_t free_next;  // kFree: the free list
  uint32_t flags;      // kInKeyChain, kInUriChain, kInLru, kDoomed
  uint32_t reserved;
  uint64_t key_hash;
  uint64_t uri_hash;
  uint64_t length;             // bytes of the entry (header to the end of the body)
  uint64_t generation;         // changes whenever the descriptor is freed
  int64_t last_access_ms;      // CLOCK_MONOTONIC (the same clock in every process)
  int64_t progress_ms;         // kFilling: when the filler last wrote
  uint64_t pinned[kPinWords];  // a bit per process slot holding a pin
};
static_assert(sizeof(Descriptor) == 128);

struct ProcessSlot {
  pthread_mutex_t life;  // held by the owner process's first thread for its whole life
  uint32_t in_use;
  int32_t pid;  // for logs only
  uint64_t attach_count;
  char pad[64 - (sizeof(pthread_mutex_t) + 16) % 64];
};

struct AreaHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t block_size;
  uint64_t total_size;
  uint32_t block_count;
  uint32_t descriptor_count;
  uint32_t bucket_count;
  uint32_t process_slots;
  pthread_mutex_t lock;
  // Under `lock`:
  uint32_t free_block_head;  // chain through block_next
  uint32_t free_blocks;
  uint32_t free_descriptor_head;
  uint32_t free_descriptors;
  uint32_t lru_head;  // most recently used
  uint32_t lru_tail;
  uint64_t entries;      // kReady descriptors
  uint64_t entry_bytes;  // their lengths
  uint64_t next_generation;
  uint64_t repairs;
  int64_t last_sweep_ms;
  // Counted without the lock.
  std::atomic<uint64_t> hits;
  std::atomic<uint64_t> misses;
  std::atomic<uint64_t> stale_served;
  std::atomic<uint64_t> revalidations;
  std::atomic<uint64_t> bytes_served;
  std::atomic<uint64_t> evictions;
  // The disk tier's bytes, shared by the instance's disk threads (disk_store.h), and
  // whether one of them counted the directory since the area was made.
  std::atomic<uint64_t> disk_bytes;
  std::atomic<uint32_t> disk_scanned;
};
static_assert(sizeof(AreaHeader) <= kPageSize);

// Where everything lives in a mapping of `memory` bytes of blocks.
struct AreaLayout {
  uint32_t block_count = 0;
  uint32_t descriptor_count = 0;
  uint32_t bucket_count = 0;
  size_t slots_offset = 0;
  size_t key_buckets_offset = 0;
  size_t uri_buckets_offset = 0;
  size_t block_next_offset = 0;
  size_t descriptors_offset = 0;
  size_t blocks_offset = 0;
  size_t total_size = 0;
};
AreaLayout layoutFor(uint64_t memory);

// A mapped area. Not copyable; unmaps when destroyed.
class SharedArea {
 public:
  // A new memfd sized and initialised for `memory` bytes of blocks (the process that
  // starts the workers). `name` shows in /proc/PID/fd ("scalws-cache:pages").
  static common::Result<common::UniqueFd> create(const char* name, uint64_t memory);
  // Maps `fd` (made by create() for the same `memory`), checking its header against the
  // layout that `memory` gives; a mismatch (another config, a foreign fd) is refused.
  static common::Result<SharedArea> attach(int fd, uint64_t memory);

  SharedArea() = default;
  SharedArea(SharedArea&& other) noexcept;
  SharedArea& operator=(SharedArea&& other) noexcept;
  SharedArea(const SharedArea&) = delete;
  SharedArea& operator=(const SharedArea&) = delete;
  ~SharedArea();

  bool valid() const { return base_ != nullptr; }
  const AreaLayout& layout() const { return layout_; }
  AreaHeader& header() const { return *reinterpret_cast<AreaHeader*>(base_); }
  ProcessSlot& slot(size_t i) const {
    return reinterpret_cast<ProcessSlot*>(base_ + layout_.slots_offset)[i];
  }
  uint32_t* keyBuckets() const {
    return reinterpret_cast<uint32_t*>(base_ + layout_.key_buckets_offset);
  }
  uint32_t* uriBuckets() const {
    return reinterpret_cast<uint32_t*>(base_ + layout_.uri_buckets_offset);
  }
  uint32_t* blockNext() const {
    return reinterpret_cast<uint32_t*>(base_ + layout_.block_next_offset);
  }
  // `index` is 1-based and must be checked by the caller.
  Descriptor& descriptor(uint32_t index) const {
    return reinterpret_cast<Descriptor*>(base_ + layout_.descriptors_offset)[index - 1];
  }
  char* block(uint32_t index) const {
    return base_ + layout_.blocks_offset + size_t{index - 1} * kBlockSize;
  }

 private:
  SharedArea(char* base, AreaLayout layout) : base_(base), layout_(layout) {}
  char* base_ = nullptr;
  AreaLayout layout_;
};

}  // namespace scalws::common::cache
