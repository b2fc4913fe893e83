// The limit table: GCRA with an injected clock, in-flight counts, eviction in a bounded
// table, and an area that is refused or scribbled on.
#include "common/limits/limit_table.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <random>
#include <set>
#include <string>

namespace scalws::common::limits {
namespace {

using Outcome = LimitDecision::Outcome;
constexpr uint64_t kSecond = 1000000000ull;
constexpr uint64_t kMinTable = 64 * 1024;

LimitTable makeTable(uint64_t bytes = kMinTable) {
  Result<UniqueFd> fd = LimitTable::create("test-limits", bytes);
  EXPECT_TRUE(fd.ok()) << fd.status().message();
  Result<LimitTable> table = LimitTable::attach(fd->get(), bytes);
  EXPECT_TRUE(table.ok()) << table.status().message();
  return std::move(table).value();
}

// `rate` requests per `period_s`, `burst` above it.
LimitRule rateRule(uint64_t rate, uint64_t period_s, uint64_t burst, uint64_t id = 7) {
  LimitRule r;
  r.id = id;
  r.interval_ns = period_s * kSecond / rate;
  r.tolerance_ns = r.interval_ns * burst;
  return r;
}

TEST(LimitTable, BurstThenRefusedWithRetryAfter) {
  LimitTable t = makeTable();
  LimitRule rule = rateRule(1, 60, 4);  // 1r/m, burst 4
  uint64_t now = 1000 * kSecond;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(t.admit(rule, "1.2.3.4", now).outcome, Outcome::kAllowed) << i;
  }
  LimitDecision d = t.admit(rule, "1.2.3.4", now);
  EXPECT_EQ(d.outcome, Outcome::kRateExceeded);
  EXPECT_EQ(d.retry_after_s, 60u);
  // 59.5 s later: half a second to wait still, rounded up to 1.
  d = t.admit(rule, "1.2.3.4", now + 59 * kSecond + kSecond / 2);
  EXPECT_EQ(d.outcome, Outcome::kRateExceeded);
  EXPECT_EQ(d.retry_after_s, 1u);
  // A minute on, exactly one more.
  EXPECT_EQ(t.admit(rule, "1.2.3.4", now + 60 * kSecond).outcome, Outcome::kAllowed);
  EXPECT_EQ(t.admit(rule, "1.2.3.4", now + 60 * kSecond).outcome, Outcome::kRateExceeded);
}

TEST(LimitTable, SteadyRateWithoutBurst) {
  LimitTable t = makeTable();
  LimitRule rule = rateRule(10, 1, 0);  // 10r/s: one per 100 ms
  uint64_t now = 5 * kSecond;
  EXPECT_EQ(t.admit(rule, "c", now).outcome, Outcome::kAllowed);
  LimitDecision d = t.admit(rule, "c", now + 50000000);
  EXPECT_EQ(d.outcome, Outcome::kRateExceeded);
  EXPECT_EQ(d.retry_after_s, 1u);  // 50 ms, at least 1 s
  int allowed = 0;
  for (int i = 1; i <= 100; ++i) {
    // Every 100 ms for 10 s: each one conforms.
    if (t.admit(rule, "c", now + static_cast<uint64_t>(i) * 100000000).outcome ==
        Outcome::kAllowed) {
      ++allowed;
    }
  }
  EXPECT_EQ(allowed, 100);
}

TEST(LimitTable, ClientsAndLimitsAreApart) {
  LimitTable t = makeTable();
  LimitRule a = rateRule(1, 60, 0, 1);
  LimitRule b = rateRule(1, 60, 0, 2);
  uint64_t now = kSecond;
  EXPECT_EQ(t.admit(a, "x", now).outcome, Outcome::kAllowed);
  EXPECT_EQ(t.admit(a, "x", now).outcome, Outcome::kRateExceeded);
  EXPECT_EQ(t.admit(a, "y", now).outcome, Outcome::kAllowed);
  EXPECT_EQ(t.admit(b, "x", now).outcome, Outcome::kAllowed);
}

TEST(LimitTable, InFlightCountedAndReleased) {
  LimitTable t = makeTable();
  LimitRule rule;
  rule.id = 3;
  rule.connections = 2;
  uint64_t now = kSecond;
  LimitDecision first = t.admit(rule, "c", now);
  LimitDecision second = t.admit(rule, "c", now);
  ASSERT_EQ(first.outcome, Outcome::kAllowed);
  ASSERT_EQ(second.outcome, Outcome::kAllowed);
  EXPECT_NE(first.slot, 0u);
  EXPECT_EQ(first.slot, second.slot);
  LimitDecision third = t.admit(rule, "c", now);
  EXPECT_EQ(third.outcome, Outcome::kTooManyInFlight);
  EXPECT_EQ(third.retry_after_s, 1u);
  EXPECT_EQ(third.slot, 0u);
  EXPECT_EQ(t.admit(rule, "other", now).outcome, Outcome::kAllowed);
  t.release(first.slot, first.key);
  LimitDecision again = t.admit(rule, "c", now);
  EXPECT_EQ(again.outcome, Outcome::kAllowed);
  // Releasing more than was taken never goes below zero.
  for (int i = 0; i < 5; ++i) t.release(second.slot, second.key);
  EXPECT_EQ(t.admit(rule, "c", now).outcome, Outcome::kAllowed);
  EXPECT_EQ(t.admit(rule, "c", now).outcome, Outcome::kAllowed);
  EXPECT_EQ(t.admit(rule, "c", now).outcome, Outcome::kTooManyInFlight);
}

TEST(LimitTable, RateRefusalGivesBackTheInFlightSlot) {
  LimitTable t = makeTable();
  LimitRule rule = rateRule(1, 60, 0);
  rule.connections = 1;
  uint64_t now = kSecond;
  LimitDecision d = t.admit(rule, "c", now);
  ASSERT_EQ(d.outcome, Outcome::kAllowed);
  t.release(d.slot, d.key);
  EXPECT_EQ(t.admit(rule, "c", now).outcome, Outcome::kRateExceeded);
  // The refused one did not stay in flight: a minute on, it is admitted, not 429 for
  // connections.
  EXPECT_EQ(t.admit(rule, "c", now + 60 * kSecond).outcome, Outcome::kAllowed);
}

TEST(LimitTable, BoundedWhateverTheClients) {
  LimitTable t = makeTable();
  const uint64_t slots = t.layout().bucket_count * kLimitWays;
  LimitRule rule = rateRule(1, 60, 0);
  uint64_t now = 100 * kSecond;
  // Ten times more clients than slots, each refused on its second request while it is
  // still in the table.
  for (uint64_t i = 0; i < slots * 10; ++i) {
    std::string client = "client-" + std::to_string(i);
    EXPECT_EQ(t.admit(rule, client, now).outcome, Outcome::kAllowed);
    EXPECT_EQ(t.admit(rule, client, now).outcome, Outcome::kRateExceeded);
  }
  EXPECT_GE(t.evictionCount(), slots * 9);
  EXPECT_EQ(t.failOpenCount(), 0u);
  // The most recent client is still remembered.
  EXPECT_EQ(t.admit(rule, "client-" + std::to_string(slots * 10 - 1), now).outcome,
            Outcome::kRateExceeded);
}

TEST(LimitTable, FailsOpenWhenEverySlotIsBusy) {
  LimitTable t = makeTable();
  LimitRule rule;
  rule.id = 9;
  rule.connections = 1000;
  uint64_t now = kSecond;
  // Fill every slot with a request in flight: nothing can be evicted.
  std::set<uint32_t> held;
  uint64_t slots = t.layout().bucket_count * kLimitWays;
  uint64_t i = 0;
  while (held.size() < slots && i < slots * 50) {
    LimitDecision d = t.admit(rule, "busy-" + std::to_string(i++), now);
    if (d.outcome == Outcome::kAllowed) held.insert(d.slot);
  }
  ASSERT_EQ(held.size(), slots);
  uint64_t before = t.failOpenCount();
  LimitDecision d = t.admit(rule, "newcomer", now);
  EXPECT_EQ(d.outcome, Outcome::kFailOpen);
  EXPECT_EQ(d.slot, 0u);
  EXPECT_EQ(t.failOpenCount(), before + 1);
}

// One bucket: which slot a newcomer takes can be seen.
TEST(LimitTable, EvictsTheOldestWithNothingInFlight) {
  LimitTable t = makeTable(kLimitHeaderSize + kLimitWays * sizeof(LimitSlot));
  ASSERT_EQ(t.layout().bucket_count, 1u);
  LimitRule rule = rateRule(1, 60, 0);
  rule.connections = 10;
  uint64_t now = 1000 * kSecond;
  LimitDecision held;
  for (uint64_t i = 0; i < kLimitWays; ++i) {
    LimitDecision d = t.admit(rule, "c" + std::to_string(i), now + i * kSecond);
    ASSERT_EQ(d.outcome, Outcome::kAllowed);
    if (i == 0) {
      held = d;  // c0 stays in flight: never evicted, though it is the oldest
    } else {
      t.release(d.slot, d.key);
    }
  }
  uint64_t later = now + 10 * kSecond;
  EXPECT_EQ(t.admit(rule, "n1", later).outcome, Outcome::kAllowed);  // takes c1's slot
  EXPECT_EQ(t.evictionCount(), 1u);
  EXPECT_EQ(t.admit(rule, "c0", later).outcome, Outcome::kRateExceeded);  // still known
  EXPECT_EQ(t.admit(rule, "c2", later).outcome, Outcome::kRateExceeded);  // still known
  // c1 was forgotten: it starts afresh.
  EXPECT_EQ(t.admit(rule, "c1", later).outcome, Outcome::kAllowed);
  // Past every TAT, every slot but c0's has expired: newcomers take those, c0 stays.
  uint64_t much_later = now + 600 * kSecond;
  for (int i = 0; i < 20; ++i) {
    LimitDecision d = t.admit(rule, "m" + std::to_string(i), much_later);
    EXPECT_EQ(d.outcome, Outcome::kAllowed);
    t.release(d.slot, d.key);
  }
  LimitDecision c0 = t.admit(rule, "c0", much_later);
  EXPECT_EQ(c0.outcome, Outcome::kAllowed);
  EXPECT_EQ(c0.slot, held.slot);  // the same slot: it was never taken from c0
}

TEST(LimitTable, AttachRefusesWhatItDidNotMake) {
  Result<UniqueFd> fd = LimitTable::create("test-limits", kMinTable);
  ASSERT_TRUE(fd.ok());
  // Another size.
  EXPECT_FALSE(LimitTable::attach(fd->get(), kMinTable * 2).ok());
  // A short file.
  UniqueFd shorter(::memfd_create("short", MFD_CLOEXEC));
  ASSERT_EQ(::ftruncate(shorter.get(), 4096), 0);
  EXPECT_FALSE(LimitTable::attach(shorter.get(), kMinTable).ok());
  // The right size, but no header (zeros), then a bad magic.
  UniqueFd blank(::memfd_create("blank", MFD_CLOEXEC));
  ASSERT_EQ(::ftruncate(blank.get(), static_cast<off_t>(limitLayoutFor(kMinTable).total_size)), 0);
  EXPECT_FALSE(LimitTable::attach(blank.get(), kMinTable).ok());
  LimitAreaHeader header{};
  header.magic = kLimitAreaMagic ^ 1;
  header.version = kLimitAreaVersion;
  header.ways = kLimitWays;
  header.total_size = limitLayoutFor(kMinTable).total_size;
  header.bucket_count = limitLayoutFor(kMinTable).bucket_count;
  ASSERT_EQ(::pwrite(blank.get(), &header, sizeof(header), 0),
            static_cast<ssize_t>(sizeof(header)));
  EXPECT_FALSE(LimitTable::attach(blank.get(), kMinTable).ok());
  header.magic = kLimitAreaMagic;
  header.bucket_count += 1;  // a layout that lies about its size
  ASSERT_EQ(::pwrite(blank.get(), &header, sizeof(header), 0),
            static_cast<ssize_t>(sizeof(header)));
  EXPECT_FALSE(LimitTable::attach(blank.get(), kMinTable).ok());
  header.bucket_count -= 1;
  ASSERT_EQ(::pwrite(blank.get(), &header, sizeof(header), 0),
            static_cast<ssize_t>(sizeof(header)));
  EXPECT_TRUE(LimitTable::attach(blank.get(), kMinTable).ok());
}

TEST(LimitTable, SharedBetweenMappings) {
  Result<UniqueFd> fd = LimitTable::create("test-limits", kMinTable);
  ASSERT_TRUE(fd.ok());
  Result<LimitTable> a = LimitTable::attach(fd->get(), kMinTable);
  Result<LimitTable> b = LimitTable::attach(fd->get(), kMinTable);
  ASSERT_TRUE(a.ok() && b.ok());
  LimitRule rule = rateRule(1, 60, 1);
  EXPECT_EQ(a->admit(rule, "c", kSecond).outcome, Outcome::kAllowed);
  EXPECT_EQ(b->admit(rule, "c", kSecond).outcome, Outcome::kAllowed);
  EXPECT_EQ(a->admit(rule, "c", kSecond).outcome, Outcome::kRateExceeded);
}

// A sibling worker scribbling random bytes over the whole area, header included: every
// call keeps working on bounded memory and answers one of the outcomes.
TEST(LimitTable, RandomBytesInTheAreaNeverCrash) {
  LimitTable t = makeTable();
  std::mt19937_64 rng(12345);
  LimitRule rules[] = {rateRule(5, 1, 3, 1), rateRule(1, 60, 0, 2), LimitRule{3, 0, 0, 2}};
  rules[1].connections = 1;
  for (int round = 0; round < 20; ++round) {
    std::span<unsigned char> raw = t.rawForTest();
    for (auto& byte : raw) byte = static_cast<unsigned char>(rng());
    for (int i = 0; i < 2000; ++i) {
      const LimitRule& rule = rules[rng() % 3];
      std::string client = std::to_string(rng() % 500);
      uint64_t now = (rng() % 2 == 0) ? rng() : kSecond * (1 + rng() % 1000);
      LimitDecision d = t.admit(rule, client, now);
      if (d.outcome == Outcome::kRateExceeded) {
        // Clamped: never longer than the rule's own horizon.
        EXPECT_LE(d.retry_after_s, (rule.tolerance_ns + rule.interval_ns) / kSecond + 1);
        EXPECT_GE(d.retry_after_s, 1u);
      }
      if (d.slot != 0) t.release(d.slot, d.key);
      t.release(static_cast<uint32_t>(rng()), rng());  // any slot number at all
    }
  }
}

TEST(LimitTable, HashIsKeyedAndNeverZero) {
  uint64_t k1[2] = {1, 2};
  uint64_t k2[2] = {1, 3};
  EXPECT_NE(limitHash(k1, 0, "abc"), limitHash(k2, 0, "abc"));
  EXPECT_NE(limitHash(k1, 0, "abc"), limitHash(k1, 1, "abc"));
  EXPECT_NE(limitHash(k1, 0, "abcdefgh"), limitHash(k1, 0, "abcdefgh "));
  EXPECT_EQ(limitHash(k1, 5, "same"), limitHash(k1, 5, "same"));
  EXPECT_NE(limitHash(k1, 0, ""), 0u);
}

}  // namespace
}  // namespace scalws::common::limits
