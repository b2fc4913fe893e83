// The disk tier: files written whole (temp then rename), read back verified, damaged ones
// dropped, the total kept under max_disk, and the disk thread around it.
#include "worker/handlers/cache/disk_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "tests/support/cache_keys.h"
#include "tests/unit/worker/handlers/static/temp_tree.h"
#include "worker/handlers/cache/disk_worker.h"
#include "worker/handlers/cache/hash64.h"
#include "worker/handlers/cache/stored_entry.h"

namespace scalws::worker::cache {
namespace {

using testing::TempTree;

using ::scalws::testing::keyOf;

std::string entryFile(std::string_view path, std::string_view body) {
  std::string head;
  appendStoredField(head, "Content-Type", "text/plain");
  EntryInfo info;
  info.body_len = body.size();
  info.key_hash = hash64(keyOf(path));
  std::string key = keyOf(path), uri = "http://shop" + std::string(path);
  std::string bytes(entryMetaSize(key, uri, {}, head), '\0');
  writeEntryMeta(info, key, uri, {}, head, bytes.data());
  std::string_view parts[] = {body};
  setEntryChecksum(bytes.data(), entryChecksum(bytes, parts));
  return bytes + std::string(body);
}

class DiskStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<DiskStore> open(uint64_t max_bytes = 1 << 20) {
    common::Result<common::UniqueFd> fd = DiskStore::openDirectory(tree_.at("cache/pages"));
    EXPECT_TRUE(fd.ok()) << fd.status().message();
    return std::make_unique<DiskStore>(std::move(fd).value(), max_bytes, 256 * 1024, bytes_);
  }
  std::string fileOf(std::string_view path) {
    char name[32];
    uint64_t h = hash64(keyOf(path));
    std::snprintf(name, sizeof(name), "%02x/%016llx", static_cast<unsigned>(h >> 56),
                  static_cast<unsigned long long>(h));
    return tree_.at("cache/pages/") + name;
  }

  TempTree tree_;
  std::atomic<uint64_t> bytes_{0};
};

TEST_F(DiskStoreTest, WriteThenReadBack) {
  auto store = open();
  std::string file = entryFile("/a", "hello");
  ASSERT_TRUE(store->write(hash64(keyOf("/a")), file).ok());
  EXPECT_EQ(store->bytes(), file.size());
  std::string out;
  EXPECT_EQ(store->read(hash64(keyOf("/a")), keyOf("/a"), out), DiskStore::ReadResult::kFound);
  EXPECT_EQ(out, file);
  EXPECT_EQ(store->read(hash64(keyOf("/b")), keyOf("/b"), out), DiskStore::ReadResult::kMissing);
  // Another key with the same hash is not this one.
  EXPECT_EQ(store->read(hash64(keyOf("/a")), keyOf("/other"), out),
            DiskStore::ReadResult::kMissing);
  // Nothing is left in the temporary directory.
  EXPECT_TRUE(std::filesystem::is_empty(tree_.at("cache/pages/tmp")));
  // Replacing counts the new size only.
  std::string bigger = entryFile("/a", "hello, again");
  ASSERT_TRUE(store->write(hash64(keyOf("/a")), bigger).ok());
  EXPECT_EQ(store->bytes(), bigger.size());
  store->remove(hash64(keyOf("/a")));
  EXPECT_EQ(store->bytes(), 0u);
}

TEST_F(DiskStoreTest, DamagedFilesAreDroppedNotServed) {
  auto store = open();
  std::string file = entryFile("/d", std::string(3000, 'd'));
  ASSERT_TRUE(store->write(hash64(keyOf("/d")), file).ok());
  {
    std::fstream f(fileOf("/d"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2000);
    f.put('X');  // one byte of the body changed
  }
  std::string out;
  EXPECT_EQ(store->read(hash64(keyOf("/d")), keyOf("/d"), out), DiskStore::ReadResult::kCorrupt);
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(std::filesystem::exists(fileOf("/d")));
  EXPECT_EQ(store->bytes(), 0u);
  // Truncated (a write torn by a crash).
  ASSERT_TRUE(store->write(hash64(keyOf("/d")), file).ok());
  std::filesystem::resize_file(fileOf("/d"), file.size() - 10);
  EXPECT_EQ(store->read(hash64(keyOf("/d")), keyOf("/d"), out), DiskStore::ReadResult::kCorrupt);
  // Empty.
  ASSERT_TRUE(store->write(hash64(keyOf("/d")), file).ok());
  std::filesystem::resize_file(fileOf("/d"), 0);
  EXPECT_EQ(store->read(hash64(keyOf("/d")), keyOf("/d"), out), DiskStore::ReadResult::kCorrupt);
}

TEST_F(DiskStoreTest, ScanCountsFilesAndClearsTemporaryOnes) {
  {
    auto store = open();
    ASSERT_TRUE(store->write(hash64(keyOf("/1")), entryFile("/1", "one")).ok());
    ASSERT_TRUE(store->write(hash64(keyOf("/2")), entryFile("/2", "two")).ok());
  }
  tree_.write("cache/pages/tmp/99999.1", "half a write");
  bytes_ = 0;  // a new instance: its area counts from zero
  auto store = open();
  store->scan();
  EXPECT_EQ(store->bytes(), entryFile("/1", "one").size() + entryFile("/2", "two").size());
  EXPECT_TRUE(std::filesystem::is_empty(tree_.at("cache/pages/tmp")));
  EXPECT_EQ(store->removeAll(), 2u);
  EXPECT_EQ(store->bytes(), 0u);
}

TEST_F(DiskStoreTest, RemoveMatchingReadsEachFilesUri) {
  auto store = open();
  for (const char* path : {"/blog/1", "/blog/2", "/about"}) {
    ASSERT_TRUE(store->write(hash64(keyOf(path)), entryFile(path, "x")).ok());
  }
  tree_.write("cache/pages/00/00000000000000aa", "not an entry");  // unreadable: removed too
  EXPECT_EQ(store->removeMatching(
                [](std::string_view uri) { return uri.starts_with("http://shop/blog/"); }),
            3u);
  std::string out;
  EXPECT_EQ(store->read(hash64(keyOf("/about")), keyOf("/about"), out),
            DiskStore::ReadResult::kFound);
  EXPECT_EQ(store->read(hash64(keyOf("/blog/1")), keyOf("/blog/1"), out),
            DiskStore::ReadResult::kMissing);
  EXPECT_EQ(store->bytes(), entryFile("/about", "x").size());
}

TEST_F(DiskStoreTest, TrimKeepsTheTotalUnderMaxDisk) {
  std::string body(1000, 't');
  uint64_t per_file = entryFile("/t0", body).size();
  auto store = open(per_file * 10);
  for (int i = 0; i < 30; ++i) {
    std::string path = "/t" + std::to_string(i);
    ASSERT_TRUE(store->write(hash64(keyOf(path)), entryFile(path, body)).ok());
  }
  EXPECT_LE(store->bytes(), per_file * 10);
  std::string out;
  EXPECT_EQ(store->read(hash64(keyOf("/t29")), keyOf("/t29"), out), DiskStore::ReadResult::kFound);
  EXPECT_EQ(store->read(hash64(keyOf("/t0")), keyOf("/t0"), out), DiskStore::ReadResult::kMissing);
}

TEST_F(DiskStoreTest, TheDiskThreadReadsWritesAndCountsOnce) {
  std::atomic<uint32_t> scanned{0};
  {
    DiskWorker worker(open(), scanned);
    EXPECT_TRUE(worker.write(hash64(keyOf("/w")), entryFile("/w", "written")));
    std::promise<std::pair<DiskStore::ReadResult, std::string>> got;
    worker.read(hash64(keyOf("/w")), keyOf("/w"), [&](DiskStore::ReadResult r, std::string b) {
      got.set_value({r, std::move(b)});
    });
    auto [result, bytes] = got.get_future().get();
    EXPECT_EQ(result, DiskStore::ReadResult::kFound);
    EXPECT_EQ(bytes, entryFile("/w", "written"));
    // Too much waiting to be written: dropped, not queued.
    EXPECT_FALSE(worker.write(1, std::string(DiskWorker::kMaxQueuedWriteBytes + 1, 'x')));
    worker.drain();
  }
  EXPECT_EQ(scanned.load(), 1u);
}

}  // namespace
}  // namespace scalws::worker::cache
