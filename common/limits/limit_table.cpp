#include "common/limits/limit_table.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

namespace scalws::common::limits {
namespace {

constexpr size_t kBucketBytes = sizeof(LimitSlot) * kLimitWays;
// CAS retries before a request is let through: contention that long is a sibling
// scribbling, not traffic.
constexpr int kMaxCasTries = 64;

uint64_t rotl(uint64_t x, int b) {
  return (x << b) | (x >> (64 - b));
}

struct SipState {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  void block(uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

uint64_t loadLe(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

uint64_t limitHash(const uint64_t key[2], uint64_t id, std::string_view data) {
  SipState s{key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
             key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull};
  s.block(id);
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  for (; n >= 8; n -= 8, p += 8) s.block(loadLe(p, 8));
  uint64_t last = (uint64_t{(data.size() + 8) & 0xff} << 56) | loadLe(p, n);
  s.block(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  uint64_t h = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
  return h == 0 ? 1 : h;
}

uint64_t monotonicNs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

LimitLayout limitLayoutFor(uint64_t bytes) {
  LimitLayout l;
  l.bucket_count = bytes > kLimitHeaderSize ? (bytes - kLimitHeaderSize) / kBucketBytes : 0;
  l.bucket_count = std::max<uint64_t>(l.bucket_count, 1);
  l.total_size = kLimitHeaderSize + l.bucket_count * kBucketBytes;
  return l;
}

Result<UniqueFd> LimitTable::create(const char* name, uint64_t bytes) {
  LimitLayout layout = limitLayoutFor(bytes);
  UniqueFd fd(::memfd_create(name, MFD_CLOEXEC));
  if (!fd) return errnoStatus(errno, "memfd_create (limit table)");
  // Zero-filled by the kernel: every slot starts empty.
  if (::ftruncate(fd.get(), static_cast<off_t>(layout.total_size)) != 0) {
    return errnoStatus(errno, "ftruncate (limit table)");
  }
  void* p = ::mmap(nullptr, kLimitHeaderSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) return errnoStatus(errno, "mmap (limit table)");
  auto* header = new (p) LimitAreaHeader();
  header->magic = kLimitAreaMagic;
  header->version = kLimitAreaVersion;
  header->ways = kLimitWays;
  header->total_size = layout.total_size;
  header->bucket_count = layout.bucket_count;
  bool keyed = ::getrandom(header->hash_key, sizeof(header->hash_key), 0) ==
               static_cast<ssize_t>(sizeof(header->hash_key));
  int saved = errno;
  ::munmap(p, kLimitHeaderSize);
  if (!keyed) return errnoStatus(saved, "getrandom (limit table)");
  return fd;
}

Result<LimitTable> LimitTable::attach(int fd, uint64_t bytes) {
  LimitLayout layout = limitLayoutFor(bytes);
  struct stat st;
  if (::fstat(fd, &st) != 0) return errnoStatus(errno, "fstat (limit table)");
  if (static_cast<uint64_t>(st.st_size) != layout.total_size) {
    return invalidArgument("limit table: its size does not fit limit_table");
  }
  void* p = ::mmap(nullptr, layout.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return errnoStatus(errno, "mmap (limit table)");
  const auto* header = static_cast<const LimitAreaHeader*>(p);
  if (header->magic != kLimitAreaMagic || header->version != kLimitAreaVersion ||
      header->ways != kLimitWays || header->total_size != layout.total_size ||
      header->bucket_count != layout.bucket_count) {
    ::munmap(p, layout.total_size);
    return invalidArgument("limit table: not made for this limit_table");
  }
  uint64_t key[2] = {header->hash_key[0], header->hash_key[1]};
  return LimitTable(static_cast<char*>(p), layout, key);
}

LimitTable::LimitTable(char* base, LimitLayout layout, const uint64_t key[2])
    : base_(base), layout_(layout) {
  hash_key_[0] = key[0];
  hash_key_[1] = key[1];
}

LimitTable::LimitTable(LimitTable&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)), layout_(other.layout_) {
  std::memcpy(hash_key_, other.hash_key_, sizeof(hash_key_));
}

LimitTable& LimitTable::operator=(LimitTable&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) ::munmap(base_, layout_.total_size);
    base_ = std::exchange(other.base_, nullptr);
    layout_ = other.layout_;
    std::memcpy(hash_key_, other.hash_key_, sizeof(hash_key_));
  }
  return *this;
}

LimitTable::~LimitTable() {
  if (base_ != nullptr) ::munmap(base_, layout_.total_size);
}

LimitSlot* LimitTable::bucket(uint64_t hash) const {
  // The position comes from our own layout only, never from the area.
  size_t index = static_cast<size_t>(hash % layout_.bucket_count);
  return reinterpret_cast<LimitSlot*>(base_ + kLimitHeaderSize) + index * kLimitWays;
}

LimitSlot* LimitTable::find(uint64_t hash, uint64_t now_ns) noexcept {
  LimitSlot* slots = bucket(hash);
  for (int attempt = 0; attempt < 3; ++attempt) {
    for (uint32_t i = 0; i < kLimitWays; ++i) {
      if (slots[i].key.load(std::memory_order_acquire) == hash) return &slots[i];
    }
    // Missing: an empty slot, else an expired one, else the oldest with nothing in flight.
    LimitSlot* victim = nullptr;
    uint64_t victim_key = 0;
    uint64_t oldest = UINT64_MAX;
    for (uint32_t i = 0; i < kLimitWays; ++i) {
      uint64_t key = slots[i].key.load(std::memory_order_acquire);
      if (key == 0) {
        victim = &slots[i];
        victim_key = 0;
        break;
      }
      if (slots[i].in_flight.load(std::memory_order_acquire) != 0) continue;
      uint64_t tat = slots[i].tat_ns.load(std::memory_order_relaxed);
      if (tat <= now_ns) {
        victim = &slots[i];
        victim_key = key;
        break;
      }
      if (tat < oldest) {
        oldest = tat;
        victim = &slots[i];
        victim_key = key;
      }
    }
    if (victim == nullptr) return nullptr;
    if (victim->key.compare_exchange_strong(victim_key, hash, std::memory_order_acq_rel)) {
      if (victim_key != 0) header().evictions.fetch_add(1, std::memory_order_relaxed);
      victim->tat_ns.store(0, std::memory_order_release);
      return victim;
    }
    // Another process took that slot meanwhile (perhaps for this very client): look again.
  }
  return nullptr;
}

LimitDecision LimitTable::admit(const LimitRule& rule, std::string_view client,
                                uint64_t now_ns) noexcept {
  LimitDecision d;
  uint64_t hash = limitHash(hash_key_, rule.id, client);
  LimitSlot* slot = find(hash, now_ns);
  if (slot == nullptr) {
    header().fail_open.fetch_add(1, std::memory_order_relaxed);
    d.outcome = LimitDecision::Outcome::kFailOpen;
    return d;
  }
  bool counted = false;
  if (rule.connections != 0) {
    uint32_t before = slot->in_flight.fetch_add(1, std::memory_order_acq_rel);
    if (before >= rule.connections) {
      release(
          static_cast<uint32_t>(slot - reinterpret_cast<LimitSlot*>(base_ + kLimitHeaderSize)) + 1,
          hash);
      d.outcome = LimitDecision::Outcome::kTooManyInFlight;
      d.retry_after_s = 1;
      return d;
    }
    counted = true;
  }
  if (rule.interval_ns != 0) {
    // GCRA: a request at `now` conforms when TAT - now <= tolerance; it moves TAT one
    // interval on from max(TAT, now).
    const uint64_t horizon = rule.tolerance_ns + rule.interval_ns;
    bool decided = false;
    for (int tries = 0; tries < kMaxCasTries && !decided; ++tries) {
      uint64_t old = slot->tat_ns.load(std::memory_order_acquire);
      // Further ahead than any conforming request can push it: not ours to believe.
      uint64_t tat = old > now_ns + horizon ? now_ns : std::max(old, now_ns);
      if (tat - now_ns > rule.tolerance_ns) {
        uint64_t wait_ns = tat - now_ns - rule.tolerance_ns;
        uint64_t seconds = (wait_ns + 999999999ull) / 1000000000ull;
        d.outcome = LimitDecision::Outcome::kRateExceeded;
        d.retry_after_s = static_cast<uint32_t>(std::max<uint64_t>(seconds, 1));
        decided = true;
      } else if (slot->tat_ns.compare_exchange_weak(old, tat + rule.interval_ns,
                                                    std::memory_order_acq_rel)) {
        decided = true;
      }
    }
    if (!decided) {
      header().fail_open.fetch_add(1, std::memory_order_relaxed);
      d.outcome = LimitDecision::Outcome::kFailOpen;
    }
  }
  uint32_t index =
      static_cast<uint32_t>(slot - reinterpret_cast<LimitSlot*>(base_ + kLimitHeaderSize)) + 1;
  if (d.outcome == LimitDecision::Outcome::kRateExceeded) {
    if (counted) release(index, hash);
    return d;
  }
  if (counted) {
    d.slot = index;
    d.key = hash;
  }
  return d;
}

void LimitTable::release(uint32_t slot, uint64_t key) noexcept {
  if (base_ == nullptr || slot == 0 || slot > layout_.bucket_count * kLimitWays) return;
  LimitSlot& s = reinterpret_cast<LimitSlot*>(base_ + kLimitHeaderSize)[slot - 1];
  // Taken by another client meanwhile (only a scribbled count lets that happen): not ours.
  if (s.key.load(std::memory_order_acquire) != key) return;
  uint32_t n = s.in_flight.load(std::memory_order_acquire);
  for (int tries = 0; n != 0 && tries < kMaxCasTries; ++tries) {
    if (s.in_flight.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) return;
  }
}

uint64_t LimitTable::failOpenCount() const {
  return base_ == nullptr ? 0 : header().fail_open.load(std::memory_order_relaxed);
}

uint64_t LimitTable::evictionCount() const {
  return base_ == nullptr ? 0 : header().evictions.load(std::memory_order_relaxed);
}

}  // namespace scalws::common::limits
