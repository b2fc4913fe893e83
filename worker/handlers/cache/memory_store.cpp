// The memory tier's lookups, pins, fills and removals. Locking, repair, process slots and
// eviction are in memory_store_upkeep.cpp.
#include "worker/handlers/cache/memory_store.h"

#include <cstring>

#include "worker/handlers/cache/stored_entry.h"

namespace scalws::worker::cache {

namespace {

// A fill that goes on this long without writing a byte is given up on by others (its
// filler, if alive, finds it doomed); lock_timeout waiters stop waiting long before.
constexpr int64_t kFillStallMs = 60'000;
// Blocks taken at a time for a body of unknown length.
constexpr uint32_t kFillBatchBlocks = 16;

bool stalled(const Descriptor& d, int64_t now_ms) {
  return now_ms - d.progress_ms > kFillStallMs;
}

}  // namespace

MemoryStore::MemoryStore(SharedArea area, uint64_t max_entry)
    : area_(std::move(area)),
      descriptor_count_(area_.layout().descriptor_count),
      block_count_(area_.layout().block_count),
      bucket_count_(area_.layout().bucket_count),
      max_entry_(max_entry),
      pin_counts_(area_.layout().descriptor_count, 0),
      pin_generations_(area_.layout().descriptor_count, 0) {}

common::Result<std::unique_ptr<MemoryStore>> MemoryStore::open(int fd, uint64_t memory,
                                                               uint64_t max_entry) {
  common::Result<SharedArea> area = SharedArea::attach(fd, memory);
  if (!area.ok()) return area.status();
  std::unique_ptr<MemoryStore> store(new MemoryStore(std::move(area).value(), max_entry));
  common::Status claimed = store->claimSlot();
  if (!claimed.ok()) return claimed;
  return store;
}

MemoryStore::~MemoryStore() {
  releaseSlot();
}

bool MemoryStore::pinned(const Descriptor& d) const {
  for (uint64_t word : d.pinned) {
    if (word != 0) return true;
  }
  return false;
}

bool MemoryStore::readEntry(const Descriptor& d, uint64_t offset, uint64_t length,
                            std::string& out) const {
  out.clear();
  if (offset > d.length || length > d.length - offset) return false;
  if (d.block_count > block_count_ || uint64_t{d.block_count} * kBlockSize < d.length) {
    return false;
  }
  out.resize(length);
  uint32_t block = d.first_block;
  uint64_t block_start = 0;
  uint64_t copied = 0;
  const uint32_t* next = area_.blockNext();
  for (uint32_t step = 0; copied < length; ++step) {
    if (step >= d.block_count || block < 1 || block > block_count_) return false;
    uint64_t block_end = block_start + kBlockSize;
    uint64_t at = offset + copied;
    if (at < block_end) {
      uint64_t in_block = at - block_start;
      uint64_t take = std::min<uint64_t>(kBlockSize - in_block, length - copied);
      std::memcpy(out.data() + copied, area_.block(block) + in_block, take);
      copied += take;
    }
    block_start = block_end;
    block = next[block - 1];
  }
  return true;
}

bool MemoryStore::entryMeta(const Descriptor& d, std::string& out) const {
  if (!readEntry(d, 0, std::min<uint64_t>(kEntryHeaderSize, d.length), out)) return false;
  if (out.size() < kEntryHeaderSize) return false;
  // The header says how long the sections are; parseEntryMeta checks them.
  uint32_t lens[4];
  std::memcpy(lens, out.data() + 12, sizeof(lens));
  uint64_t meta = kEntryHeaderSize;
  for (uint32_t len : lens) meta += len;
  if (meta > d.length) return false;
  return readEntry(d, 0, meta, out);
}

common::Result<EntryView> MemoryStore::parseMeta(uint32_t index, const std::string& meta) {
  if (parsed_.empty()) parsed_.resize(kParsedMetaSlots);
  ParsedMeta& memo = parsed_[index % kParsedMetaSlots];
  if (memo.index == index && memo.bytes == meta) {
    return rebaseEntryView(memo.view, memo.bytes.data(), meta.data());
  }
  common::Result<EntryView> view = parseEntryMeta(meta);
  if (view.ok()) {
    memo.index = index;
    memo.bytes = meta;
    memo.view = rebaseEntryView(*view, meta.data(), memo.bytes.data());
  } else {
    memo.index = 0;
  }
  return view;
}

MemoryStore::LookupResult MemoryStore::lookup(uint64_t key_hash, std::string_view key,
                                              const VaryMatcher& matcher, size_t copy_limit,
                                              int64_t now_ms, Hit& hit) {
  LookupResult result;
  hit.body.clear();
  hit.segments.clear();
  hit.pin = Pin{};
  Locked lock(*this);
  if (!lock) return result;
  uint32_t found = 0;
  size_t found_meta = 0;
  EntryView found_view;  // views into scratch_
  // A walk that changed the chain (a dead fill or a corrupt entry dropped) starts over.
  for (int walk = 0; walk < 8; ++walk) {
    result = LookupResult{};
    bool restart = false;
    uint32_t steps = 0;
    for (uint32_t i = area_.keyBuckets()[bucketOf(key_hash)]; i != 0 && found == 0 && !restart;) {
      if (!validIndex(i) || ++steps > descriptor_count_) {
        repair_needed_ = true;
        return LookupResult{};
      }
      Descriptor& d = area_.descriptor(i);
      uint32_t next = d.key_next;
      if (d.key_hash == key_hash && d.state == uint32_t(DescriptorState::kFilling)) {
        bool alive = slotAlive(d.filler_slot);  // reaps a dead filler's descriptors
        if (d.state != uint32_t(DescriptorState::kFilling)) {
          restart = true;
        } else if (alive && !stalled(d, now_ms)) {
          result.filling = true;
        } else {
          d.flags |= kDoomed;  // its filler finds it so when it writes again
          unlinkEverywhere(i);
          restart = true;
        }
      } else if (d.key_hash == key_hash && d.state == uint32_t(DescriptorState::kReady)) {
        ++result.ready_seen;
        common::Result<EntryView> view =
            entryMeta(d, scratch_) ? parseMeta(i, scratch_) : common::invalidArgument("");
        if (!view.ok() || view->meta_size + view->info.body_len != d.length) {
          remove(i);  // a corrupt entry is dropped, never served
          restart = true;
        } else if (view->key == key) {
          result.found = Found::kVaryMiss;
          if (matcher.matches(view->vary)) {
            found = i;
            found_meta = view->meta_size;
            found_view = *view;
          }
        }
      }
      i = next;
    }
    if (!restart) break;
  }
  if (found == 0) return result;

  Descriptor& d = area_.descriptor(found);
  size_t meta_size = found_meta;
  uint64_t body_len = d.length - meta_size;
  hit.meta.assign(scratch_.data(), meta_size);
  hit.view = rebaseEntryView(found_view, scratch_.data(), hit.meta.data());
  if (body_len <= copy_limit) {
    if (!readEntry(d, meta_size, body_len, hit.body)) {
      repair_needed_ = true;
      return result;
    }
  } else {
    // Views of the body in the blocks; the entry stays pinned until unpin().
    uint32_t block = d.first_block;
    uint64_t block_start = 0;
    uint64_t end = meta_size + body_len;
    const uint32_t* next = area_.blockNext();
    for (uint32_t step = 0; block_start < end; ++step) {
      if (step >= d.block_count || block < 1 || block > block_count_) {
        hit.segments.clear();
        repair_needed_ = true;
        return result;
      }
      uint64_t from = std::max<uint64_t>(block_start, meta_size);
      uint64_t to = std::min<uint64_t>(block_start + kBlockSize, end);
      if (from < to) {
        hit.segments.emplace_back(area_.block(block) + (from - block_start), to - from);
      }
      block_start += kBlockSize;
      block = next[block - 1];
    }
    uint32_t& count = pin_counts_[found - 1];
    if (pin_generations_[found - 1] != d.generation) {
      pin_generations_[found - 1] = d.generation;
      count = 0;
    }
    ++count;
    d.pinned[slot_ / 64] |= uint64_t{1} << (slot_ % 64);
    hit.pin = Pin{found, d.generation};
  }
  d.last_access_ms = now_ms;
  lruUnlink(found);
  lruPushFront(found);
  result.found = Found::kHit;
  return result;
}

void MemoryStore::unpin(const Pin& pin) {
  if (pin.index == 0) return;
  Locked lock(*this);
  if (!lock || !validIndex(pin.index)) return;
  Descriptor& d = area_.descriptor(pin.index);
  uint32_t& count = pin_counts_[pin.index - 1];
  // A descriptor repaired away meanwhile is someone else's now: nothing of ours to drop.
  if (d.generation != pin.generation || pin_generations_[pin.index - 1] != pin.generation ||
      count == 0) {
    return;
  }
  if (--count > 0) return;
  d.pinned[slot_ / 64] &= ~(uint64_t{1} << (slot_ % 64));
  if (d.state == uint32_t(DescriptorState::kRemoved) && !pinned(d)) freeDescriptor(pin.index);
}

bool MemoryStore::beginFill(uint64_t key_hash, uint64_t uri_hash, int64_t now_ms, Fill& fill,
                            uint32_t ready_seen) {
  fill = Fill{};
  Locked lock(*this);
  if (!lock) return false;
  uint32_t steps = 0;
  uint32_t ready = 0;
  for (uint32_t i = area_.keyBuckets()[bucketOf(key_hash)]; i != 0;) {
    if (!validIndex(i) || ++steps > descriptor_count_) {
      repair_needed_ = true;
      return false;
    }
    Descriptor& d = area_.descriptor(i);
    uint32_t next = d.key_next;
    if (d.key_hash == key_hash && d.state == uint32_t(DescriptorState::kFilling)) {
      bool alive = slotAlive(d.filler_slot);  // reaps a dead filler's descriptors
      if (d.state == uint32_t(DescriptorState::kFilling)) {
        if (alive && !stalled(d, now_ms)) return false;
        d.flags |= kDoomed;
        unlinkEverywhere(i);
      }
      next = area_.keyBuckets()[bucketOf(key_hash)];  // the chain changed: start over
      ready = 0;
    } else if (d.key_hash == key_hash && d.state == uint32_t(DescriptorState::kReady)) {
      ++ready;
    }
    i = next;
  }
  if (ready_seen != kAnyReady && ready != ready_seen) {
    fill.entry_changed = true;
    return false;
  }
  AreaHeader& h = area_.header();
  if (h.free_descriptor_head == 0 && !evictFor(0)) return false;  // evicts for a descriptor
  uint32_t index = h.free_descriptor_head;
  if (!validIndex(index)) {
    repair_needed_ = true;
    return false;
  }
  Descriptor& d = area_.descriptor(index);
  h.free_descriptor_head = d.free_next;
  --h.free_descriptors;
  uint64_t generation = d.generation;
  std::memset(&d, 0, sizeof(d));
  d.generation = generation;
  d.state = uint32_t(DescriptorState::kFilling);
  d.filler_slot = slot_;
  d.key_hash = key_hash;
  d.uri_hash = uri_hash;
  d.progress_ms = now_ms;
  uint32_t& bucket = area_.keyBuckets()[bucketOf(key_hash)];
  d.key_next = bucket;
  bucket = index;
  d.flags = kInKeyChain;
  fill.index = index;
  fill.generation = generation;
  return true;
}

bool MemoryStore::takeBlocks(Fill& fill, uint32_t count) {
  // Under the lock.
  if (!validIndex(fill.index)) return false;
  Descriptor& d = area_.descriptor(fill.index);
  if (d.generation != fill.generation || d.state != uint32_t(DescriptorState::kFilling) ||
      (d.flags & kDoomed) != 0) {
    return false;
  }
  AreaHeader& h = area_.header();
  if (h.free_blocks < count && !evictFor(count)) return false;
  uint32_t* next = area_.blockNext();
  for (uint32_t n = 0; n < count; ++n) {
    uint32_t block = h.free_block_head;
    if (block < 1 || block > block_count_) {
      repair_needed_ = true;
      return false;
    }
    h.free_block_head = next[block - 1];
    --h.free_blocks;
    next[block - 1] = 0;
    if (d.last_block == 0) {
      d.first_block = block;
    } else {
      next[d.last_block - 1] = block;
    }
    d.last_block = block;
    ++d.block_count;
    fill.reserved += kBlockSize;
  }
  return true;
}

bool MemoryStore::reserve(Fill& fill, uint64_t total) {
  if (fill.index == 0) return false;
  if (total > max_entry_ + kEntryHeaderSize + 4 * kMaxHeadBytes) return false;
  if (total <= fill.reserved) return true;
  uint64_t more = (total - fill.reserved + kBlockSize - 1) / kBlockSize;
  Locked lock(*this);
  return lock && takeBlocks(fill, static_cast<uint32_t>(more));
}

bool MemoryStore::append(Fill& fill, std::string_view bytes, int64_t now_ms) {
  if (fill.index == 0) return false;
  uint64_t total = fill.written + bytes.size();
  if (total > fill.reserved) {
    uint64_t more = (total - fill.reserved + kBlockSize - 1) / kBlockSize;
    if (!reserve(fill, fill.reserved + std::max<uint64_t>(more, kFillBatchBlocks) * kBlockSize) &&
        !reserve(fill, total)) {
      return false;
    }
  }
  // Our own blocks: written without the lock (nobody else touches them until commit).
  const Descriptor& d = area_.descriptor(fill.index);
  const uint32_t* next = area_.blockNext();
  uint32_t block = d.first_block;
  uint64_t skip = fill.written / kBlockSize;
  for (uint64_t s = 0; s < skip; ++s) {
    if (block < 1 || block > block_count_) return false;
    block = next[block - 1];
  }
  uint64_t in_block = fill.written % kBlockSize;
  while (!bytes.empty()) {
    if (block < 1 || block > block_count_) return false;
    size_t take = std::min<uint64_t>(kBlockSize - in_block, bytes.size());
    std::memcpy(area_.block(block) + in_block, bytes.data(), take);
    bytes.remove_prefix(take);
    fill.written += take;
    in_block = 0;
    block = next[block - 1];
  }
  area_.descriptor(fill.index).progress_ms = now_ms;
  return true;
}

bool MemoryStore::overwrite(const Fill& fill, uint64_t offset, std::string_view bytes) {
  if (fill.index == 0 || offset > fill.written || bytes.size() > fill.written - offset) {
    return false;
  }
  const Descriptor& d = area_.descriptor(fill.index);
  const uint32_t* next = area_.blockNext();
  uint32_t block = d.first_block;
  for (uint64_t s = 0; s < offset / kBlockSize; ++s) {
    if (block < 1 || block > block_count_) return false;
    block = next[block - 1];
  }
  uint64_t in_block = offset % kBlockSize;
  while (!bytes.empty()) {
    if (block < 1 || block > block_count_) return false;
    size_t take = std::min<uint64_t>(kBlockSize - in_block, bytes.size());
    std::memcpy(area_.block(block) + in_block, bytes.data(), take);
    bytes.remove_prefix(take);
    in_block = 0;
    block = next[block - 1];
  }
  return true;
}

bool MemoryStore::commit(Fill& fill, uint64_t uri_hash, int64_t now_ms) {
  Fill done = fill;
  fill = Fill{};
  if (done.index == 0) return false;
  Locked lock(*this);
  if (!lock || !validIndex(done.index)) return false;
  Descriptor& d = area_.descriptor(done.index);
  if (d.generation != done.generation || d.state != uint32_t(DescriptorState::kFilling)) {
    return false;
  }
  if ((d.flags & kDoomed) != 0) {
    remove(done.index);
    return false;
  }
  d.length = done.written;
  // Blocks reserved beyond the end go back.
  uint32_t keep = static_cast<uint32_t>((done.written + kBlockSize - 1) / kBlockSize);
  if (keep == 0) keep = 1;
  uint32_t* next = area_.blockNext();
  uint32_t block = d.first_block;
  for (uint32_t n = 1; n < keep && block != 0; ++n) block = next[block - 1];
  if (block >= 1 && block <= block_count_ && keep < d.block_count) {
    uint32_t rest = next[block - 1];
    next[block - 1] = 0;
    d.last_block = block;
    AreaHeader& h = area_.header();
    for (uint32_t steps = 0; rest != 0 && steps < block_count_; ++steps) {
      if (rest < 1 || rest > block_count_) {
        repair_needed_ = true;
        break;
      }
      uint32_t after = next[rest - 1];
      next[rest - 1] = h.free_block_head;
      h.free_block_head = rest;
      ++h.free_blocks;
      --d.block_count;
      rest = after;
    }
  }
  std::string meta;
  common::Result<EntryView> view =
      entryMeta(d, meta) ? parseEntryMeta(meta) : common::invalidArgument("");
  if (!view.ok() || view->meta_size + view->info.body_len != d.length) {
    remove(done.index);
    return false;
  }
  // The entries this one replaces: same key, same secondary key.
  uint32_t steps = 0;
  for (uint32_t i = area_.keyBuckets()[bucketOf(d.key_hash)]; i != 0;) {
    if (!validIndex(i) || ++steps > descriptor_count_) {
      repair_needed_ = true;
      break;
    }
    Descriptor& other = area_.descriptor(i);
    uint32_t after = other.key_next;
    if (i != done.index && other.key_hash == d.key_hash &&
        other.state == uint32_t(DescriptorState::kReady) && sameEntry(i, meta)) {
      remove(i);
    }
    i = after;
  }
  d.state = uint32_t(DescriptorState::kReady);
  d.uri_hash = uri_hash;
  d.last_access_ms = now_ms;
  uint32_t& bucket = area_.uriBuckets()[bucketOf(uri_hash)];
  d.uri_next = bucket;
  bucket = done.index;
  d.flags |= kInUriChain;
  lruPushFront(done.index);
  AreaHeader& h = area_.header();
  ++h.entries;
  h.entry_bytes += d.length;
  return true;
}

bool MemoryStore::sameEntry(uint32_t index, std::string_view b_meta) {
  std::string a_meta;
  if (!entryMeta(area_.descriptor(index), a_meta)) return false;
  common::Result<EntryView> a = parseEntryMeta(a_meta);
  common::Result<EntryView> b = parseEntryMeta(b_meta);
  return a.ok() && b.ok() && a->key == b->key && a->vary == b->vary;
}

void MemoryStore::abandon(Fill& fill) {
  Fill done = fill;
  fill = Fill{};
  if (done.index == 0) return;
  Locked lock(*this);
  if (!lock || !validIndex(done.index)) return;
  const Descriptor& d = area_.descriptor(done.index);
  if (d.generation == done.generation && d.state == uint32_t(DescriptorState::kFilling)) {
    remove(done.index);
  }
}

size_t MemoryStore::removeUri(uint64_t uri_hash, std::string_view uri) {
  size_t removed = 0;
  Locked lock(*this);
  if (!lock) return 0;
  // Fills of this URI under way would store what was just purged: doomed.
  for (uint32_t i = 1; i <= descriptor_count_; ++i) {
    Descriptor& d = area_.descriptor(i);
    if (d.state == uint32_t(DescriptorState::kFilling) && d.uri_hash == uri_hash) {
      d.flags |= kDoomed;
      unlinkEverywhere(i);
    }
  }
  uint32_t steps = 0;
  for (uint32_t i = area_.uriBuckets()[bucketOf(uri_hash)]; i != 0;) {
    if (!validIndex(i) || ++steps > descriptor_count_) {
      repair_needed_ = true;
      break;
    }
    Descriptor& d = area_.descriptor(i);
    uint32_t next = d.uri_next;
    if (d.uri_hash == uri_hash && d.state == uint32_t(DescriptorState::kReady)) {
      common::Result<EntryView> view =
          entryMeta(d, scratch_) ? parseEntryMeta(scratch_) : common::invalidArgument("");
      if (!view.ok() || view->uri == uri) {
        remove(i);
        ++removed;
      }
    }
    i = next;
  }
  return removed;
}

size_t MemoryStore::removePrefix(std::string_view prefix) {
  // In batches, so no other worker waits long for the lock.
  constexpr uint32_t kBatch = 1024;
  size_t removed = 0;
  for (uint32_t first = 1; first <= descriptor_count_; first += kBatch) {
    Locked lock(*this);
    if (!lock) return removed;
    uint32_t last = std::min(descriptor_count_, first + kBatch - 1);
    for (uint32_t i = first; i <= last; ++i) {
      Descriptor& d = area_.descriptor(i);
      if (d.state == uint32_t(DescriptorState::kFilling)) {
        d.flags |= kDoomed;  // its URI is not known here: every fill under way is doomed
        unlinkEverywhere(i);
      } else if (d.state == uint32_t(DescriptorState::kReady)) {
        bool match = prefix.empty();
        if (!match) {
          common::Result<EntryView> view =
              entryMeta(d, scratch_) ? parseEntryMeta(scratch_) : common::invalidArgument("");
          match = !view.ok() || view->uri.substr(0, prefix.size()) == prefix;
        }
        if (match) {
          remove(i);
          ++removed;
        }
      }
    }
  }
  return removed;
}

MemoryStore::Stats MemoryStore::stats() const {
  const AreaHeader& h = area_.header();
  Stats s;
  s.entries = h.entries;
  s.entry_bytes = h.entry_bytes;
  s.blocks_total = block_count_;
  s.blocks_free = h.free_blocks;
  s.repairs = h.repairs;
  s.hits = h.hits.load(std::memory_order_relaxed);
  s.misses = h.misses.load(std::memory_order_relaxed);
  s.stale_served = h.stale_served.load(std::memory_order_relaxed);
  s.revalidations = h.revalidations.load(std::memory_order_relaxed);
  s.bytes_served = h.bytes_served.load(std::memory_order_relaxed);
  s.evictions = h.evictions.load(std::memory_order_relaxed);
  return s;
}

}  // namespace scalws::worker::cache
