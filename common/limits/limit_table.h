// The table every request limit of a site keeps its clients in (`limit` on a route or on
// [site], common/config/limit_config.h): one memfd per site, made by whoever starts the
// workers (the standalone master before it forks, a single-mode process for itself, the
// controller for an instance) and mapped MAP_SHARED by every worker process, so the rate
// a client gets is the site's, not one worker's.
//
// Layout, fixed by [site] limit_table (layoutFor()):
//
//   LimitAreaHeader   one page: magic, version, sizes, the hash key, counters
//   LimitSlot[]       bucket_count buckets of kLimitWays slots
//
// A slot is one (limit, client) pair: the 64-bit keyed hash of both (0: empty), its
// theoretical arrival time (GCRA, in CLOCK_MONOTONIC ns, the same clock in every process;
// 0: never) and its requests in flight. Every change is a single atomic operation on one
// word (CAS loops for the TAT and for claiming a slot): no lock, nothing a process killed
// half-way can leave held. A client whose key is not in its bucket takes an empty slot,
// else an expired one (TAT passed, nothing in flight), else the one with the oldest TAT and
// nothing in flight; when every slot of the bucket has requests in flight the request is
// let through uncounted (fail open), and counted in the header.
//
// Races between processes only blur the counts (a slot claimed for another client while
// one of its own requests reads it); they never break the table. Nor can a hostile or
// broken sibling worker of the same instance: the area holds no pointer and no index,
// bucket positions come from this process's own copy of the layout, and every value read
// (a TAT from the future, an in-flight count past any limit) is clamped before use.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::common::limits {

inline constexpr uint64_t kLimitAreaMagic = 0x31544d494c575353ull;  // "SSWLIMT1"
inline constexpr uint32_t kLimitAreaVersion = 1;
inline constexpr uint32_t kLimitWays = 8;
inline constexpr size_t kLimitHeaderSize = 4096;

struct LimitAreaHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t ways;
  uint64_t total_size;
  uint64_t bucket_count;
  uint64_t hash_key[2];  // SipHash key, random per area
  // Counted without a lock; for metrics and logs only.
  std::atomic<uint64_t> fail_open;
  std::atomic<uint64_t> evictions;
};
static_assert(sizeof(LimitAreaHeader) <= kLimitHeaderSize);

struct LimitSlot {
  std::atomic<uint64_t> key;
  std::atomic<uint64_t> tat_ns;
  std::atomic<uint32_t> in_flight;
  uint32_t reserved;
  uint64_t reserved2;
};
static_assert(sizeof(LimitSlot) == 32);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

struct LimitLayout {
  uint64_t bucket_count = 0;
  size_t total_size = 0;
};
// The layout for a limit_table of `bytes` (at least kLimitHeaderSize plus one bucket).
LimitLayout limitLayoutFor(uint64_t bytes);

// One limit as the table applies it.
struct LimitRule {
  uint64_t id = 0;            // which limit (a route's, the site's): part of the hash
  uint64_t interval_ns = 0;   // GCRA emission interval (period / rate); 0: no rate
  uint64_t tolerance_ns = 0;  // interval * burst
  uint32_t connections = 0;   // 0: no bound on requests in flight
};

struct LimitDecision {
  enum class Outcome : uint8_t { kAllowed, kRateExceeded, kTooManyInFlight, kFailOpen };
  Outcome outcome = Outcome::kAllowed;
  uint32_t retry_after_s = 0;  // refused: Retry-After, at least 1
  // kAllowed with a connections bound: what release() takes (slot is 1-based; 0: none).
  uint32_t slot = 0;
  uint64_t key = 0;
};

class LimitTable {
 public:
  // A new memfd sized and initialised for `bytes` (with a fresh hash key). `name` shows in
  // /proc/PID/fd ("scalws-limits").
  static Result<UniqueFd> create(const char* name, uint64_t bytes);
  // Maps `fd` (made by create() for the same `bytes`), checking its size and header against
  // the layout `bytes` gives: anything else (another size, a foreign or scribbled fd) is
  // refused.
  static Result<LimitTable> attach(int fd, uint64_t bytes);

  LimitTable() = default;
  LimitTable(LimitTable&& other) noexcept;
  LimitTable& operator=(LimitTable&& other) noexcept;
  LimitTable(const LimitTable&) = delete;
  LimitTable& operator=(const LimitTable&) = delete;
  ~LimitTable();

  bool valid() const { return base_ != nullptr; }
  const LimitLayout& layout() const { return layout_; }

  // One request of `client` under `rule` at `now_ns` (CLOCK_MONOTONIC): counts it, or says
  // why not. Allocation-free.
  LimitDecision admit(const LimitRule& rule, std::string_view client, uint64_t now_ns) noexcept;
  // The end of a request admit() counted in flight (decision.slot != 0).
  void release(uint32_t slot, uint64_t key) noexcept;

  uint64_t failOpenCount() const;
  uint64_t evictionCount() const;
  // The mapping's bytes, for tests that corrupt it.
  std::span<unsigned char> rawForTest() const {
    return {reinterpret_cast<unsigned char*>(base_), layout_.total_size};
  }

 private:
  LimitTable(char* base, LimitLayout layout, const uint64_t key[2]);
  LimitAreaHeader& header() const { return *reinterpret_cast<LimitAreaHeader*>(base_); }
  LimitSlot* bucket(uint64_t hash) const;
  // The slot of `hash` in its bucket, claimed when missing; null when none can be.
  LimitSlot* find(uint64_t hash, uint64_t now_ns) noexcept;

  char* base_ = nullptr;
  LimitLayout layout_;
  uint64_t hash_key_[2] = {0, 0};  // copied at attach: a sibling changing it changes nothing
};

// CLOCK_MONOTONIC in ns.
uint64_t monotonicNs();
// SipHash-2-4 of `id` then `data` under `key` (never 0: 0 marks an empty slot).
uint64_t limitHash(const uint64_t key[2], uint64_t id, std::string_view data);

}  // namespace scalws::common::limits
