// The shared memory tier: lookups, pins, fills, eviction, removals, and what happens when
// a process sharing it dies at a bad moment or scribbles on it.
#include "worker/handlers/cache/memory_store.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <string>

#include "tests/support/cache_keys.h"
#include "worker/handlers/cache/hash64.h"
#include "worker/handlers/cache/stored_entry.h"

namespace scalws::worker::cache {
namespace {

constexpr uint64_t kMemory = 1 << 20;  // 256 blocks
constexpr uint64_t kMaxEntry = 512 * 1024;

class ExactVary final : public VaryMatcher {
 public:
  explicit ExactVary(std::string vary = {}) : vary_(std::move(vary)) {}
  bool matches(std::string_view stored) const override { return stored == vary_; }

 private:
  std::string vary_;
};

using ::scalws::testing::keyOf;

std::string uriOf(std::string_view path) {
  return "http://shop" + std::string(path);
}

std::string entryBytes(std::string_view path, std::string_view body, std::string_view vary = {}) {
  std::string head;
  appendStoredField(head, "Content-Type", "text/plain");
  EntryInfo info;
  info.body_len = body.size();
  info.key_hash = hash64(keyOf(path));
  std::string key = keyOf(path), uri = uriOf(path);
  std::string bytes(entryMetaSize(key, uri, vary, head), '\0');
  writeEntryMeta(info, key, uri, vary, head, bytes.data());
  return bytes + std::string(body);
}

class MemoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    common::Result<common::UniqueFd> fd = SharedArea::create("test-cache", kMemory);
    ASSERT_TRUE(fd.ok()) << fd.status().message();
    fd_ = std::move(fd).value();
    store_ = open();
  }
  std::unique_ptr<MemoryStore> open() {
    common::Result<std::unique_ptr<MemoryStore>> s =
        MemoryStore::open(fd_.get(), kMemory, kMaxEntry);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  // Stores `body` for `path` in pieces, as a fill does.
  static bool store(MemoryStore& s, std::string_view path, std::string_view body,
                    std::string_view vary = {}, int64_t now = 1000) {
    MemoryStore::Fill fill;
    if (!s.beginFill(hash64(keyOf(path)), hash64(uriOf(path)), now, fill)) return false;
    std::string bytes = entryBytes(path, body, vary);
    for (size_t at = 0; at < bytes.size(); at += 1000) {
      if (!s.append(fill, std::string_view(bytes).substr(at, 1000), now)) {
        s.abandon(fill);
        return false;
      }
    }
    return s.commit(fill, hash64(uriOf(path)), now);
  }
  static void expectSameView(const EntryView& got, const EntryView& want) {
    for (auto [a, b] : {std::pair{got.key, want.key}, std::pair{got.uri, want.uri},
                        std::pair{got.vary, want.vary}, std::pair{got.head, want.head}}) {
      EXPECT_EQ(a.data(), b.data());
      EXPECT_EQ(a.size(), b.size());
    }
    EXPECT_EQ(got.meta_size, want.meta_size);
    EXPECT_EQ(got.info.status, want.info.status);
    EXPECT_EQ(got.info.body_len, want.info.body_len);
    EXPECT_EQ(got.info.checksum, want.info.checksum);
  }
  // The body stored for `path`, or "<miss>".
  static std::string get(MemoryStore& s, std::string_view path, size_t copy_limit = 1 << 20,
                         std::string_view vary = {}) {
    MemoryStore::Hit hit;
    ExactVary matcher{std::string(vary)};
    MemoryStore::LookupResult r =
        s.lookup(hash64(keyOf(path)), keyOf(path), matcher, copy_limit, 2000, hit);
    if (r.found != MemoryStore::Found::kHit) return "<miss>";
    // The lookup hands back the meta it checked, parsed, viewing hit.meta itself.
    common::Result<EntryView> parsed = parseEntryMeta(hit.meta);
    EXPECT_TRUE(parsed.ok());
    if (parsed.ok()) expectSameView(hit.view, *parsed);
    std::string body = hit.body;
    for (std::string_view seg : hit.segments) body += seg;
    s.unpin(hit.pin);
    return body;
  }

  // Where the entry stored for `path` (one block) starts in the area, found through a
  // pinned lookup, for a test to scribble on; null (and a failure) when it is not there.
  char* storedBytes(std::string_view path) {
    MemoryStore::Hit hit;
    ExactVary matcher;
    MemoryStore::LookupResult r =
        store_->lookup(hash64(keyOf(path)), keyOf(path), matcher, 0, 0, hit);
    EXPECT_EQ(r.found, MemoryStore::Found::kHit);
    EXPECT_EQ(hit.segments.size(), 1u);
    if (r.found != MemoryStore::Found::kHit || hit.segments.size() != 1) return nullptr;
    char* block = const_cast<char*>(hit.segments[0].data()) - hit.meta.size();
    store_->unpin(hit.pin);
    return block;
  }

  common::UniqueFd fd_;
  std::unique_ptr<MemoryStore> store_;
};

TEST_F(MemoryStoreTest, StoreAndFindCopiedOrPinned) {
  std::string big(20'000, 'b');
  ASSERT_TRUE(store(*store_, "/small", "hello"));
  ASSERT_TRUE(store(*store_, "/big", big));
  EXPECT_EQ(get(*store_, "/small"), "hello");
  EXPECT_EQ(get(*store_, "/big"), big);
  EXPECT_EQ(get(*store_, "/big", 0), big);  // pinned, read from the blocks
  EXPECT_EQ(get(*store_, "/none"), "<miss>");
  MemoryStore::Stats stats = store_->stats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.blocks_total, 256u);
  EXPECT_EQ(stats.blocks_free, 256u - 1 - 5);  // one block, then five for 20 KB + meta
}

TEST_F(MemoryStoreTest, PinnedEntriesOutliveTheirRemoval) {
  std::string body(10'000, 'p');
  ASSERT_TRUE(store(*store_, "/p", body));
  MemoryStore::Hit hit;
  ExactVary matcher;
  ASSERT_EQ(store_->lookup(hash64(keyOf("/p")), keyOf("/p"), matcher, 0, 2000, hit).found,
            MemoryStore::Found::kHit);
  ASSERT_NE(hit.pin.index, 0u);
  EXPECT_EQ(store_->removeUri(hash64(uriOf("/p")), uriOf("/p")), 1u);
  EXPECT_EQ(get(*store_, "/p"), "<miss>");
  uint64_t free_before = store_->stats().blocks_free;
  // Filling everything else cannot take the pinned blocks.
  for (int i = 0; i < 100; ++i) store(*store_, "/f" + std::to_string(i), std::string(9000, 'f'));
  std::string seen;
  for (std::string_view seg : hit.segments) seen += seg;
  EXPECT_EQ(seen, body);
  store_->unpin(hit.pin);
  EXPECT_GE(store_->stats().blocks_free + 0, 0u);
  (void)free_before;
}

TEST_F(MemoryStoreTest, VariantsAndReplacement) {
  ASSERT_TRUE(store(*store_, "/v", "gzip body", "accept-encoding:gzip\n"));
  ASSERT_TRUE(store(*store_, "/v", "plain body", "accept-encoding:\n"));
  EXPECT_EQ(get(*store_, "/v", 1 << 20, "accept-encoding:gzip\n"), "gzip body");
  EXPECT_EQ(get(*store_, "/v", 1 << 20, "accept-encoding:\n"), "plain body");
  MemoryStore::Hit hit;
  ExactVary other("accept-encoding:br\n");
  EXPECT_EQ(store_->lookup(hash64(keyOf("/v")), keyOf("/v"), other, 0, 0, hit).found,
            MemoryStore::Found::kVaryMiss);
  // A new fill of the same variant replaces the old one.
  ASSERT_TRUE(store(*store_, "/v", "gzip body 2", "accept-encoding:gzip\n"));
  EXPECT_EQ(get(*store_, "/v", 1 << 20, "accept-encoding:gzip\n"), "gzip body 2");
  EXPECT_EQ(store_->stats().entries, 2u);
}

TEST_F(MemoryStoreTest, OneFillPerKey) {
  MemoryStore::Fill a, b;
  ASSERT_TRUE(store_->beginFill(hash64(keyOf("/c")), 1, 1000, a));
  EXPECT_FALSE(store_->beginFill(hash64(keyOf("/c")), 1, 1000, b));
  MemoryStore::Hit hit;
  ExactVary matcher;
  MemoryStore::LookupResult r =
      store_->lookup(hash64(keyOf("/c")), keyOf("/c"), matcher, 0, 1000, hit);
  EXPECT_EQ(r.found, MemoryStore::Found::kMiss);
  EXPECT_TRUE(r.filling);
  // Nothing half-written is ever found.
  ASSERT_TRUE(store_->append(a, entryBytes("/c", "abc").substr(0, 50), 1000));
  EXPECT_EQ(get(*store_, "/c"), "<miss>");
  store_->abandon(a);
  EXPECT_TRUE(store_->beginFill(hash64(keyOf("/c")), 1, 1000, b));
  store_->abandon(b);
  // A fill nobody advanced for a minute is given up on by others.
  ASSERT_TRUE(store_->beginFill(hash64(keyOf("/c")), 1, 1000, a));
  EXPECT_TRUE(store_->beginFill(hash64(keyOf("/c")), 1, 1000 + 61'000, b));
  EXPECT_FALSE(store_->commit(a, 1, 62'000));  // doomed
  store_->abandon(b);
}

// A waiter saw the fill under way; the fill was published before the waiter asked for the
// lock again. It must look the entry up, not send a second request upstream.
TEST_F(MemoryStoreTest, AFillPublishedBetweenLookupAndBeginFillIsNotRefilled) {
  MemoryStore::Fill filler, waiter;
  ASSERT_TRUE(store_->beginFill(hash64(keyOf("/r")), hash64(uriOf("/r")), 1000, filler));
  MemoryStore::Hit hit;
  ExactVary matcher;
  MemoryStore::LookupResult seen =
      store_->lookup(hash64(keyOf("/r")), keyOf("/r"), matcher, 0, 1000, hit);
  EXPECT_TRUE(seen.filling);
  EXPECT_EQ(seen.ready_seen, 0u);
  ASSERT_TRUE(store_->append(filler, entryBytes("/r", "answer"), 1000));
  ASSERT_TRUE(store_->commit(filler, hash64(uriOf("/r")), 1000));
  EXPECT_FALSE(
      store_->beginFill(hash64(keyOf("/r")), hash64(uriOf("/r")), 1000, waiter, seen.ready_seen));
  EXPECT_TRUE(waiter.entry_changed);
  MemoryStore::LookupResult again =
      store_->lookup(hash64(keyOf("/r")), keyOf("/r"), matcher, 1 << 20, 1000, hit);
  EXPECT_EQ(again.found, MemoryStore::Found::kHit);
  EXPECT_EQ(again.ready_seen, 1u);
  // With what it saw now, a revalidation may take the lock.
  ASSERT_TRUE(
      store_->beginFill(hash64(keyOf("/r")), hash64(uriOf("/r")), 1000, waiter, again.ready_seen));
  EXPECT_FALSE(waiter.entry_changed);
  store_->abandon(waiter);
}

TEST_F(MemoryStoreTest, LeastRecentlyUsedIsEvictedFirst) {
  std::string body(3000, 'e');  // one block each with the meta
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(store(*store_, "/e" + std::to_string(i), body, {}, i));
  EXPECT_EQ(get(*store_, "/e0"), "<miss>");  // the first ones made room for the last
  EXPECT_EQ(get(*store_, "/e255"), body);
  EXPECT_GT(store_->stats().evictions, 0u);
  // Using an entry keeps it.
  std::string kept = "/e" + std::to_string(255 - 200);
  EXPECT_EQ(get(*store_, kept), body);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(store(*store_, "/g" + std::to_string(i), body));
  EXPECT_EQ(get(*store_, kept), body);
  // Too large for max_entry: refused, and nothing left behind.
  MemoryStore::Fill fill;
  ASSERT_TRUE(store_->beginFill(hash64(keyOf("/huge")), 1, 1000, fill));
  EXPECT_FALSE(store_->reserve(fill, kMaxEntry * 2));
  store_->abandon(fill);
}

TEST_F(MemoryStoreTest, InactiveEntriesSwept) {
  ASSERT_TRUE(store(*store_, "/old", "x", {}, 1000));
  ASSERT_TRUE(store(*store_, "/new", "y", {}, 50'000));
  store_->sweep(62'000, 60'000);
  EXPECT_EQ(get(*store_, "/old"), "<miss>");
  EXPECT_EQ(get(*store_, "/new"), "y");
}

TEST_F(MemoryStoreTest, PurgeByUriPrefixAndAll) {
  ASSERT_TRUE(store(*store_, "/a/1", "1"));
  ASSERT_TRUE(store(*store_, "/a/2", "2"));
  ASSERT_TRUE(store(*store_, "/b/1", "3"));
  EXPECT_EQ(store_->removeUri(hash64(uriOf("/a/1")), uriOf("/a/1")), 1u);
  EXPECT_EQ(get(*store_, "/a/1"), "<miss>");
  EXPECT_EQ(store_->removePrefix(uriOf("/a/")), 1u);
  EXPECT_EQ(get(*store_, "/a/2"), "<miss>");
  EXPECT_EQ(get(*store_, "/b/1"), "3");
  // A fill under way when its URI is purged is not published.
  MemoryStore::Fill fill;
  ASSERT_TRUE(store_->beginFill(hash64(keyOf("/b/2")), hash64(uriOf("/b/2")), 1000, fill));
  ASSERT_TRUE(store_->append(fill, entryBytes("/b/2", "new"), 1000));
  EXPECT_EQ(store_->removePrefix(""), 1u);
  EXPECT_FALSE(store_->commit(fill, hash64(uriOf("/b/2")), 1000));
  EXPECT_EQ(get(*store_, "/b/1"), "<miss>");
  EXPECT_EQ(get(*store_, "/b/2"), "<miss>");
  EXPECT_EQ(store_->stats().entries, 0u);
  EXPECT_EQ(store_->stats().blocks_free, 256u);
}

TEST_F(MemoryStoreTest, ScribbledEntriesAreDroppedNotServed) {
  ASSERT_TRUE(store(*store_, "/s", "secret"));
  ASSERT_TRUE(store(*store_, "/t", "kept"));
  char* block = storedBytes("/s");
  ASSERT_NE(block, nullptr);
  std::memset(block + 12, 0xff, 4);  // the key length
  EXPECT_EQ(get(*store_, "/s"), "<miss>");
  EXPECT_EQ(get(*store_, "/t"), "kept");
  EXPECT_EQ(store_->stats().entries, 1u);
}

TEST_F(MemoryStoreTest, AnEntryScribbledAfterItWasServedIsDroppedNotServed) {
  // A served entry's parsed meta is remembered; a scribble that keeps its section lengths
  // (the status here) must still be seen: the bytes are compared, not trusted.
  ASSERT_TRUE(store(*store_, "/s", "secret"));
  char* block = storedBytes("/s");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(get(*store_, "/s"), "secret");  // served again, from the remembered parse
  block[8] = 0;                             // the status, 200 -> 0
  block[9] = 0;
  EXPECT_EQ(get(*store_, "/s"), "<miss>");
  EXPECT_EQ(store_->stats().entries, 0u);
}

TEST_F(MemoryStoreTest, AScribbledIndexIsRebuilt) {
  ASSERT_TRUE(store(*store_, "/r", "rebuilt"));
  AreaLayout layout = layoutFor(kMemory);
  auto* base = reinterpret_cast<char*>(&store_->header());
  auto* buckets = reinterpret_cast<uint32_t*>(base + layout.key_buckets_offset);
  auto* block_next = reinterpret_cast<uint32_t*>(base + layout.block_next_offset);
  for (uint32_t i = 0; i < layout.bucket_count; ++i) {
    if (buckets[i] == 0) buckets[i] = 0xdeadbeef;  // chains into nowhere
  }
  for (uint32_t i = 0; i < 10; ++i) block_next[i] = 0x7fffffff;  // the free list too
  store(*store_, "/x", "x");  // finds the damage, rebuilds, goes on
  EXPECT_GE(store_->stats().repairs, 1u);
  EXPECT_EQ(get(*store_, "/r"), "rebuilt");
  EXPECT_TRUE(store(*store_, "/y", "y"));
  EXPECT_EQ(get(*store_, "/y"), "y");
}

// Runs `child` in a forked process that opens the store itself; returns its wait status.
template <typename F>
int inChild(int fd, F&& child) {
  pid_t pid = fork();
  if (pid == 0) {
    common::Result<std::unique_ptr<MemoryStore>> s = MemoryStore::open(fd, kMemory, kMaxEntry);
    if (!s.ok()) _exit(3);
    child(**s);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST_F(MemoryStoreTest, AnEntryStoredByAnotherProcessIsAHit) {
  int status = inChild(fd_.get(), [](MemoryStore& s) {
    if (!store(s, "/shared", "from the child")) _exit(4);
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(get(*store_, "/shared"), "from the child");
}

TEST_F(MemoryStoreTest, AFillerKilledMidFillLeavesNothingHalfWritten) {
  int status = inChild(fd_.get(), [](MemoryStore& s) {
    MemoryStore::Fill fill;
    if (!s.beginFill(hash64(keyOf("/k")), hash64(uriOf("/k")), 1000, fill)) _exit(4);
    std::string bytes = entryBytes("/k", std::string(10'000, 'k'));
    s.append(fill, std::string_view(bytes).substr(0, 5000), 1000);
    raise(SIGKILL);
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  MemoryStore::Hit hit;
  ExactVary matcher;
  MemoryStore::LookupResult r =
      store_->lookup(hash64(keyOf("/k")), keyOf("/k"), matcher, 0, 1000, hit);
  EXPECT_EQ(r.found, MemoryStore::Found::kMiss);
  EXPECT_FALSE(r.filling);  // its death was noticed: the next miss fills
  EXPECT_TRUE(store(*store_, "/k", "whole"));
  EXPECT_EQ(get(*store_, "/k"), "whole");
  EXPECT_EQ(store_->stats().blocks_free, 255u);  // the dead fill's blocks came back
}

TEST_F(MemoryStoreTest, AProcessKilledHoldingTheLockLeavesAUsableIndex) {
  ASSERT_TRUE(store(*store_, "/before", "kept"));
  int status = inChild(fd_.get(), [](MemoryStore& s) {
    pthread_mutex_lock(&s.header().lock);
    s.header().free_block_head = 0xffffff;  // halfway through a change
    raise(SIGKILL);
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(get(*store_, "/before"), "kept");
  EXPECT_GE(store_->stats().repairs, 1u);
  EXPECT_TRUE(store(*store_, "/after", "stored"));
  EXPECT_EQ(get(*store_, "/after"), "stored");
}

TEST_F(MemoryStoreTest, ADeadProcessesPinsAreDropped) {
  ASSERT_TRUE(store(*store_, "/pin", std::string(8000, 'q')));
  int status = inChild(fd_.get(), [](MemoryStore& s) {
    MemoryStore::Hit hit;
    ExactVary matcher;
    s.lookup(hash64(keyOf("/pin")), keyOf("/pin"), matcher, 0, 0, hit);
    if (hit.pin.index == 0) _exit(4);
    raise(SIGKILL);  // dies holding the pin
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(store_->removeUri(hash64(uriOf("/pin")), uriOf("/pin")), 1u);
  EXPECT_LT(store_->stats().blocks_free, 256u);  // still pinned by the dead process
  store_->sweep(100'000, 3'600'000);             // notices the death
  EXPECT_EQ(store_->stats().blocks_free, 256u);
}

TEST_F(MemoryStoreTest, SlotsAreReusedAfterOrderlyAndKilledExits) {
  for (int i = 0; i < 300; ++i) {  // more than kProcessSlots in total
    int status = inChild(fd_.get(), [i](MemoryStore&) {
      if (i % 2 == 0) raise(SIGKILL);
    });
    ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) << i;
  }
}

TEST(SharedArea, AttachRefusesAnotherLayout) {
  common::Result<common::UniqueFd> fd = SharedArea::create("test-cache", kMemory);
  ASSERT_TRUE(fd.ok());
  EXPECT_FALSE(SharedArea::attach(fd->get(), kMemory * 2).ok());
  EXPECT_TRUE(SharedArea::attach(fd->get(), kMemory).ok());
  EXPECT_FALSE(MemoryStore::open(0, kMemory, kMaxEntry).ok());  // not an area at all
}

}  // namespace
}  // namespace scalws::worker::cache
