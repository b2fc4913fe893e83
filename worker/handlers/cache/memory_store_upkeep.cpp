// The memory tier's housekeeping: the index lock and what a dead holder leaves behind,
// process slots, the rebuild of an index found inconsistent, eviction and freeing.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "worker/handlers/cache/memory_store.h"

namespace scalws::worker::cache {
namespace {

// Tries before sleeping on the futex: an index operation lasts well under a microsecond,
// so a waiter usually gets the lock within the spin and makes no system call.
constexpr int kSpins = 200;
// Entries a sweep evicts at most, so it holds the lock briefly.
constexpr uint32_t kSweepBudget = 4096;

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

bool isFilling(const Descriptor& d) {
  return d.state == uint32_t(DescriptorState::kFilling);
}
bool isReady(const Descriptor& d) {
  return d.state == uint32_t(DescriptorState::kReady);
}

}  // namespace

bool MemoryStore::lockIndex() {
  pthread_mutex_t* m = &area_.header().lock;
  int rc = EBUSY;
  for (int i = 0; i < kSpins && rc == EBUSY; ++i) {
    rc = pthread_mutex_trylock(m);
    if (rc == EBUSY) cpuRelax();
  }
  if (rc == EBUSY) rc = pthread_mutex_lock(m);
  if (rc == EOWNERDEAD) {
    // A process died holding the lock, maybe halfway through changing the index.
    LOG_WARN("cache: a worker died holding the index lock; rebuilding the index");
    pthread_mutex_consistent(m);
    repair();
    return true;
  }
  if (rc != 0) {
    LOG_ERROR("cache: the index lock failed (%s); the cache is off", strerror(rc));
    return false;
  }
  return true;
}

void MemoryStore::unlockIndex() {
  if (repair_needed_) {
    repair_needed_ = false;
    LOG_WARN("cache: the index was inconsistent; rebuilding it");
    repair();
  }
  pthread_mutex_unlock(&area_.header().lock);
}

common::Status MemoryStore::claimSlot() {
  Locked lock(*this);
  if (!lock) return common::internalError("cache: the index lock is beyond recovery");
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t i = 0; i < kProcessSlots; ++i) {
      ProcessSlot& s = area_.slot(i);
      // The second pass reaps the slots of owners that died, and takes the first.
      if (s.in_use != 0 && (pass == 0 || slotAlive(i))) continue;
      int rc = pthread_mutex_trylock(&s.life);
      if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&s.life);
        rc = 0;
      }
      if (rc != 0) continue;
      // Held from now on, by this thread, until releaseSlot(): our death shows as
      // EOWNERDEAD to whoever probes the slot.
      slot_ = i;
      s.in_use = 1;
      s.pid = static_cast<int32_t>(::getpid());
      ++s.attach_count;
      return common::okStatus();
    }
  }
  return common::internalError("cache: every process slot of the area is taken");
}

void MemoryStore::releaseSlot() {
  if (slot_ >= kProcessSlots) return;  // never claimed
  {
    Locked lock(*this);
    if (lock) {
      for (uint32_t i = 1; i <= descriptor_count_; ++i) {
        Descriptor& d = area_.descriptor(i);
        uint64_t bit = uint64_t{1} << (slot_ % 64);
        if ((d.pinned[slot_ / 64] & bit) != 0) {
          d.pinned[slot_ / 64] &= ~bit;
          if (d.state == uint32_t(DescriptorState::kRemoved) && !pinned(d)) freeDescriptor(i);
        }
        if (isFilling(d) && d.filler_slot == slot_) remove(i);
      }
      area_.slot(slot_).in_use = 0;
    }
  }
  pthread_mutex_unlock(&area_.slot(slot_).life);
}

bool MemoryStore::slotAlive(uint32_t slot) {
  if (slot >= kProcessSlots) return false;
  if (slot == slot_) return true;
  ProcessSlot& s = area_.slot(slot);
  if (s.in_use == 0) return false;
  int rc = pthread_mutex_trylock(&s.life);
  if (rc == EBUSY) return true;
  if (rc == EOWNERDEAD) pthread_mutex_consistent(&s.life);
  if (rc == 0 || rc == EOWNERDEAD) pthread_mutex_unlock(&s.life);
  // Dead (or its mutex unusable): what it held is dropped.
  LOG_INFO("cache: worker pid %d (slot %u) is gone; dropping its pins and fills", s.pid, slot);
  reapSlot(slot);
  return false;
}

void MemoryStore::reapSlot(uint32_t slot) {
  uint64_t bit = uint64_t{1} << (slot % 64);
  for (uint32_t i = 1; i <= descriptor_count_; ++i) {
    Descriptor& d = area_.descriptor(i);
    d.pinned[slot / 64] &= ~bit;
    if (isFilling(d) && d.filler_slot == slot) {
      remove(i);  // a half-written entry: never published
    } else if (d.state == uint32_t(DescriptorState::kRemoved) && !pinned(d)) {
      freeDescriptor(i);
    }
  }
  area_.slot(slot).in_use = 0;
}

void MemoryStore::lruPushFront(uint32_t index) {
  Descriptor& d = area_.descriptor(index);
  AreaHeader& h = area_.header();
  d.lru_prev = 0;
  d.lru_next = h.lru_head;
  if (validIndex(h.lru_head)) area_.descriptor(h.lru_head).lru_prev = index;
  h.lru_head = index;
  if (h.lru_tail == 0) h.lru_tail = index;
  d.flags |= kInLru;
}

void MemoryStore::lruUnlink(uint32_t index) {
  Descriptor& d = area_.descriptor(index);
  if ((d.flags & kInLru) == 0) return;
  AreaHeader& h = area_.header();
  if (validIndex(d.lru_prev)) {
    area_.descriptor(d.lru_prev).lru_next = d.lru_next;
  } else {
    h.lru_head = d.lru_next;
  }
  if (validIndex(d.lru_next)) {
    area_.descriptor(d.lru_next).lru_prev = d.lru_prev;
  } else {
    h.lru_tail = d.lru_prev;
  }
  d.lru_prev = d.lru_next = 0;
  d.flags &= ~kInLru;
}

void MemoryStore::unlinkEverywhere(uint32_t index) {
  Descriptor& d = area_.descriptor(index);
  auto unlinkFrom = [&](uint32_t* buckets, uint64_t hash, uint32_t Descriptor::*next) {
    uint32_t* link = &buckets[bucketOf(hash)];
    for (uint32_t steps = 0; *link != 0; ++steps) {
      if (!validIndex(*link) || steps > descriptor_count_) {
        repair_needed_ = true;
        return;
      }
      if (*link == index) {
        *link = d.*next;
        d.*next = 0;
        return;
      }
      link = &(area_.descriptor(*link).*next);
    }
  };
  if ((d.flags & kInKeyChain) != 0)
    unlinkFrom(area_.keyBuckets(), d.key_hash, &Descriptor::key_next);
  if ((d.flags & kInUriChain) != 0)
    unlinkFrom(area_.uriBuckets(), d.uri_hash, &Descriptor::uri_next);
  lruUnlink(index);
  d.flags &= ~(kInKeyChain | kInUriChain);
}

void MemoryStore::remove(uint32_t index) {
  Descriptor& d = area_.descriptor(index);
  unlinkEverywhere(index);
  if (isReady(d)) {
    AreaHeader& h = area_.header();
    if (h.entries > 0) --h.entries;
    h.entry_bytes -= std::min(h.entry_bytes, d.length);
  }
  if (pinned(d)) {
    d.state = uint32_t(DescriptorState::kRemoved);  // freed by the last unpin
  } else {
    freeDescriptor(index);
  }
}

void MemoryStore::freeDescriptor(uint32_t index) {
  Descriptor& d = area_.descriptor(index);
  if (d.state == uint32_t(DescriptorState::kFree)) return;
  unlinkEverywhere(index);
  AreaHeader& h = area_.header();
  uint32_t* next = area_.blockNext();
  uint32_t block = d.first_block;
  for (uint32_t n = 0; n < d.block_count && block != 0; ++n) {
    if (block < 1 || block > block_count_) {
      repair_needed_ = true;  // the rebuild finds the blocks nobody holds
      break;
    }
    uint32_t after = next[block - 1];
    next[block - 1] = h.free_block_head;
    h.free_block_head = block;
    ++h.free_blocks;
    block = after;
  }
  uint64_t generation = h.next_generation++;
  std::memset(&d, 0, sizeof(d));
  d.generation = generation;
  d.free_next = h.free_descriptor_head;
  h.free_descriptor_head = index;
  ++h.free_descriptors;
}

bool MemoryStore::evictFor(uint32_t blocks) {
  AreaHeader& h = area_.header();
  uint32_t steps = 0;
  uint32_t i = h.lru_tail;
  while ((h.free_blocks < blocks || h.free_descriptor_head == 0) && i != 0) {
    if (!validIndex(i) || ++steps > descriptor_count_) {
      repair_needed_ = true;
      return false;
    }
    Descriptor& d = area_.descriptor(i);
    uint32_t prev = d.lru_prev;
    if (isReady(d) && !pinned(d)) {
      remove(i);
      h.evictions.fetch_add(1, std::memory_order_relaxed);
    }
    i = prev;
  }
  return h.free_blocks >= blocks && h.free_descriptor_head != 0;
}

void MemoryStore::sweep(int64_t now_ms, uint64_t inactive_ms) {
  Locked lock(*this);
  if (!lock) return;
  AreaHeader& h = area_.header();
  if (now_ms - h.last_sweep_ms < 1000 && now_ms >= h.last_sweep_ms) return;
  h.last_sweep_ms = now_ms;
  int64_t cutoff = now_ms - static_cast<int64_t>(inactive_ms);
  uint32_t i = h.lru_tail;
  for (uint32_t steps = 0, evicted = 0; i != 0 && evicted < kSweepBudget; ++steps) {
    if (!validIndex(i) || steps > descriptor_count_) {
      repair_needed_ = true;
      return;
    }
    Descriptor& d = area_.descriptor(i);
    uint32_t prev = d.lru_prev;
    if (d.last_access_ms >= cutoff) break;  // the rest were used more recently
    if (isReady(d) && !pinned(d)) {
      remove(i);
      ++evicted;
      h.evictions.fetch_add(1, std::memory_order_relaxed);
    }
    i = prev;
  }
  for (uint32_t s = 0; s < kProcessSlots; ++s) {
    if (area_.slot(s).in_use != 0) slotAlive(s);
  }
}

void MemoryStore::repairForTest() {
  Locked lock(*this);
  if (lock) repair();
}

void MemoryStore::repair() {
  // Under the lock. The descriptors are the truth: each one that is in a known state and
  // whose block chain is sound (indices in range, no block claimed twice) is kept; the
  // free lists, chains, LRU order and counters are rebuilt from them.
  AreaHeader& h = area_.header();
  ++h.repairs;
  uint32_t* next = area_.blockNext();
  std::vector<uint8_t> claimed(block_count_ + 1, 0);
  std::vector<uint32_t> ready;
  std::vector<uint32_t> walk;
  std::memset(area_.keyBuckets(), 0, sizeof(uint32_t) * bucket_count_);
  std::memset(area_.uriBuckets(), 0, sizeof(uint32_t) * bucket_count_);
  h.free_descriptor_head = 0;
  h.free_descriptors = 0;
  h.entries = 0;
  h.entry_bytes = 0;
  for (uint32_t i = descriptor_count_; i >= 1; --i) {
    Descriptor& d = area_.descriptor(i);
    bool keep = d.state == uint32_t(DescriptorState::kFilling) || isReady(d) ||
                d.state == uint32_t(DescriptorState::kRemoved);
    if (keep && isFilling(d)) {
      ProcessSlot& s = area_.slot(d.filler_slot < kProcessSlots ? d.filler_slot : 0);
      keep = d.filler_slot < kProcessSlots && s.in_use != 0;
    }
    if (keep && d.state == uint32_t(DescriptorState::kRemoved)) keep = pinned(d);
    if (keep && (d.block_count > block_count_ || uint64_t{d.block_count} * kBlockSize < d.length)) {
      keep = false;
    }
    walk.clear();
    uint32_t block = d.first_block;
    for (uint32_t n = 0; keep && n < d.block_count; ++n) {
      if (block < 1 || block > block_count_ || claimed[block] != 0) {
        keep = false;
        break;
      }
      walk.push_back(block);
      block = n + 1 < d.block_count ? next[block - 1] : 0;
    }
    if (!keep) {
      uint64_t generation = h.next_generation++;
      std::memset(&d, 0, sizeof(d));
      d.generation = generation;
      d.free_next = h.free_descriptor_head;
      h.free_descriptor_head = i;
      ++h.free_descriptors;
      continue;
    }
    for (uint32_t b : walk) claimed[b] = 1;
    if (!walk.empty()) next[walk.back() - 1] = 0;
    d.last_block = walk.empty() ? 0 : walk.back();
    d.flags &= kDoomed;
    d.key_next = d.uri_next = d.lru_prev = d.lru_next = 0;
    if (isFilling(d) && (d.flags & kDoomed) == 0) {
      uint32_t& bucket = area_.keyBuckets()[bucketOf(d.key_hash)];
      d.key_next = bucket;
      bucket = i;
      d.flags |= kInKeyChain;
    } else if (isReady(d)) {
      uint32_t& kb = area_.keyBuckets()[bucketOf(d.key_hash)];
      d.key_next = kb;
      kb = i;
      uint32_t& ub = area_.uriBuckets()[bucketOf(d.uri_hash)];
      d.uri_next = ub;
      ub = i;
      d.flags |= kInKeyChain | kInUriChain;
      ready.push_back(i);
      ++h.entries;
      h.entry_bytes += d.length;
    }
  }
  h.free_block_head = 0;
  h.free_blocks = 0;
  for (uint32_t b = block_count_; b >= 1; --b) {
    if (claimed[b] != 0) continue;
    next[b - 1] = h.free_block_head;
    h.free_block_head = b;
    ++h.free_blocks;
  }
  std::sort(ready.begin(), ready.end(), [this](uint32_t a, uint32_t b) {
    return area_.descriptor(a).last_access_ms < area_.descriptor(b).last_access_ms;
  });
  h.lru_head = h.lru_tail = 0;
  for (uint32_t i : ready) lruPushFront(i);  // oldest first, so the newest ends at the head
  repair_needed_ = false;
}

}  // namespace scalws::worker::cache
