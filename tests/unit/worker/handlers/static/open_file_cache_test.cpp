#include "worker/handlers/static/open_file_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "tests/unit/worker/handlers/static/temp_tree.h"

namespace scalws::worker {
namespace {

using common::config::FollowSymlinks;
using common::config::OpenFileCacheConfig;
using testing::fdIsOpen;
using testing::TempTree;
using Mode = OpenFileCacheConfig::Mode;

class OpenFileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.write("a.txt", "alpha");
    tree_.write("b.txt", "bravo!");
    tree_.write("c.txt", "charlie");
    tree_.write("big.bin", std::string(40000, 'x'));
    auto root = DocRoot::open(tree_.path(), FollowSymlinks::kBeneath);
    ASSERT_TRUE(root.ok()) << root.status().message();
    root_ = std::move(root).value();
  }

  FileLookup lookup(std::string_view path, Mode mode = Mode::kCheck, uint64_t now = 0,
                    uint64_t valid_for = 0, uint64_t turn = 0) {
    FileLookup l;
    l.root = &root_;
    l.scope = "scope";
    l.path = path;
    l.policy.mode = mode;
    l.policy.valid_for = valid_for;
    l.now_ms = now;
    l.turn = turn;
    return l;
  }

  // Acquires, checks, copies out what the test needs and releases.
  struct Seen {
    int fd = -1;
    std::string bytes;
    std::string etag;
    OpenFile* file = nullptr;
  };
  Seen get(OpenFileCache& cache, const FileLookup& l) {
    FileResult r = cache.acquire(l);
    EXPECT_NE(r.file, nullptr) << "error " << r.error;
    if (r.file == nullptr) return {};
    Seen s{r.file->fd(), std::string(r.file->bytes()), std::string(r.file->etag()), r.file};
    r.file->release();
    return s;
  }

  TempTree tree_;
  DocRoot root_;
};

TEST_F(OpenFileCacheTest, HitReturnsTheSameEntryWithKeptBytes) {
  OpenFileCache cache(OpenFileCache::Limits{});
  Seen first = get(cache, lookup("a.txt"));
  EXPECT_EQ(first.bytes, "alpha");
  Seen second = get(cache, lookup("a.txt"));
  EXPECT_EQ(second.file, first.file);
  EXPECT_EQ(second.fd, first.fd);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.keptBytes(), 5u);
  // Large files are not kept in memory: they go out with sendfile.
  FileResult big = cache.acquire(lookup("big.bin"));
  ASSERT_NE(big.file, nullptr);
  EXPECT_FALSE(big.file->hasBytes());
  EXPECT_EQ(big.file->size(), 40000u);
  big.file->release();
}

TEST_F(OpenFileCacheTest, CheckModeSeesAChangedFile) {
  OpenFileCache cache(OpenFileCache::Limits{});
  tree_.setMtime("a.txt", 1000000000);
  Seen before = get(cache, lookup("a.txt"));
  // Same size, new content and mtime: the identity differs, so the file is reopened.
  tree_.write("a.txt", "ALPHA");
  tree_.setMtime("a.txt", 1000000001);
  Seen after = get(cache, lookup("a.txt"));
  EXPECT_EQ(after.bytes, "ALPHA");
  EXPECT_NE(after.etag, before.etag);
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(OpenFileCacheTest, CheckModeChecksOncePerLoopTurn) {
  OpenFileCache cache(OpenFileCache::Limits{});
  int64_t mtime = 1000000000;
  tree_.setMtime("a.txt", mtime);
  auto rewrite = [&](const char* content) {  // same size, new mtime: a changed identity
    tree_.write("a.txt", content);
    tree_.setMtime("a.txt", ++mtime);
  };
  auto seen = [&](uint64_t turn) {
    return get(cache, lookup("a.txt", Mode::kCheck, 0, 0, turn)).bytes;
  };
  EXPECT_EQ(seen(7), "alpha");
  rewrite("ALPHA");
  // Opened in turn 7: later hits of turn 7 share that look, so the change is not seen yet.
  EXPECT_EQ(seen(7), "alpha");
  // The next turn looks again and opens the new version.
  EXPECT_EQ(seen(8), "ALPHA");
  rewrite("Alpha");
  // A hit checked (not opened) in turn 9 covers the rest of turn 9 too.
  EXPECT_EQ(seen(9), "Alpha");
  rewrite("aLPHA");
  EXPECT_EQ(seen(9), "Alpha");
  EXPECT_EQ(seen(10), "aLPHA");
  // Turn 0 is no turn: every hit is checked.
  rewrite("alpHA");
  EXPECT_EQ(seen(0), "alpHA");
  rewrite("ALPha");
  EXPECT_EQ(seen(0), "ALPha");
}

TEST_F(OpenFileCacheTest, CheckModeSeesAReplacedAndADeletedFile) {
  OpenFileCache cache(OpenFileCache::Limits{});
  Seen before = get(cache, lookup("b.txt"));
  EXPECT_EQ(before.bytes, "bravo!");
  // Atomic replace (rename over): a new inode at the same path.
  tree_.write("b.new", "BRAVO!");
  ASSERT_EQ(std::rename(tree_.at("b.new").c_str(), tree_.at("b.txt").c_str()), 0);
  EXPECT_EQ(get(cache, lookup("b.txt")).bytes, "BRAVO!");
  std::filesystem::remove(tree_.at("b.txt"));
  FileResult gone = cache.acquire(lookup("b.txt"));
  EXPECT_EQ(gone.file, nullptr);
  EXPECT_EQ(gone.error, ENOENT);
  EXPECT_EQ(cache.size(), 0u);
}

TEST_F(OpenFileCacheTest, ValidModeTrustsAnEntryForItsDuration) {
  OpenFileCache cache(OpenFileCache::Limits{});
  get(cache, lookup("c.txt", Mode::kValid, 1000, 30000));
  tree_.write("c.txt", "CHANGED!");
  // Within 30 s of the last check: trusted, not even a statx.
  EXPECT_EQ(get(cache, lookup("c.txt", Mode::kValid, 30999, 30000)).bytes, "charlie");
  // Past it: checked, and the new version is opened.
  EXPECT_EQ(get(cache, lookup("c.txt", Mode::kValid, 31000, 30000)).bytes, "CHANGED!");
}

TEST_F(OpenFileCacheTest, OffModeKeepsNothingAndClosesOnRelease) {
  OpenFileCache cache(OpenFileCache::Limits{});
  FileResult r = cache.acquire(lookup("a.txt", Mode::kOff));
  ASSERT_NE(r.file, nullptr);
  int fd = r.file->fd();
  EXPECT_FALSE(r.file->hasBytes());
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(fdIsOpen(fd));
  r.file->release();
  EXPECT_FALSE(fdIsOpen(fd));
}

TEST_F(OpenFileCacheTest, EvictionIsLeastRecentlyUsedAndClosesFds) {
  OpenFileCache::Limits limits;
  limits.max_entries = 2;
  OpenFileCache cache(limits);
  Seen a = get(cache, lookup("a.txt"));
  Seen b = get(cache, lookup("b.txt"));
  get(cache, lookup("a.txt"));  // a is now the most recently used
  EXPECT_EQ(cache.lruTailForTest(), b.file);
  Seen c = get(cache, lookup("c.txt"));  // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(fdIsOpen(b.fd));
  EXPECT_TRUE(fdIsOpen(a.fd));
  EXPECT_TRUE(fdIsOpen(c.fd));
  EXPECT_EQ(cache.lruTailForTest(), a.file);
  cache.clear();
  EXPECT_FALSE(fdIsOpen(a.fd));
  EXPECT_FALSE(fdIsOpen(c.fd));
}

TEST_F(OpenFileCacheTest, AnEntryInUseOutlivesItsEviction) {
  OpenFileCache::Limits limits;
  limits.max_entries = 1;
  OpenFileCache cache(limits);
  FileResult held = cache.acquire(lookup("a.txt"));  // as a response in flight would
  ASSERT_NE(held.file, nullptr);
  int fd = held.file->fd();
  get(cache, lookup("b.txt"));  // evicts a.txt from the cache
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(fdIsOpen(fd));  // still sending from it
  char c = 0;
  EXPECT_EQ(::pread(fd, &c, 1, 0), 1);
  EXPECT_EQ(c, 'a');
  held.file->release();  // the response finished
  EXPECT_FALSE(fdIsOpen(fd));
}

TEST_F(OpenFileCacheTest, KeptBytesAreBounded) {
  OpenFileCache::Limits limits;
  limits.max_kept_bytes = 13;  // "alpha" + "bravo!" fit, "charlie" pushes "alpha" out
  OpenFileCache cache(limits);
  get(cache, lookup("a.txt"));
  get(cache, lookup("b.txt"));
  EXPECT_EQ(cache.keptBytes(), 11u);
  Seen c = get(cache, lookup("c.txt"));
  EXPECT_EQ(c.bytes, "charlie");
  EXPECT_EQ(cache.keptBytes(), 13u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST_F(OpenFileCacheTest, NegativeEntriesOnlyWhenAskedAndCheckedLikeTheOthers) {
  OpenFileCache cache(OpenFileCache::Limits{});
  FileLookup plain = lookup("missing.txt");
  EXPECT_EQ(cache.acquire(plain).error, ENOENT);
  EXPECT_EQ(cache.size(), 0u);  // ordinary misses are not remembered
  FileLookup variant = lookup("a.txt");
  variant.suffix = ".br";
  variant.variant = true;
  variant.remember_missing = true;
  EXPECT_EQ(cache.acquire(variant).error, ENOENT);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.acquire(variant).error, ENOENT);  // hit on the negative entry
  // Created since: check mode notices at once.
  tree_.write("a.txt.br", "compressed");
  Seen now = get(cache, variant);
  EXPECT_EQ(now.bytes, "compressed");
}

TEST_F(OpenFileCacheTest, DirectoriesAndSpecialFilesAreNotFiles) {
  OpenFileCache cache(OpenFileCache::Limits{});
  tree_.mkdir("sub");
  EXPECT_EQ(cache.acquire(lookup("sub")).error, EISDIR);
  EXPECT_EQ(cache.acquire(lookup("")).error, EISDIR);  // the root itself
  ASSERT_EQ(::mkfifo(tree_.at("pipe").c_str(), 0644), 0);
  EXPECT_EQ(cache.acquire(lookup("pipe")).error, ENODEV);  // and it did not block
  EXPECT_EQ(cache.size(), 0u);
}

TEST_F(OpenFileCacheTest, SymlinksAreHeldBeneathTheRoot) {
  TempTree outside;
  outside.write("secret", "top secret");
  tree_.symlink(outside.at("secret"), "escape");
  tree_.symlink("../" + std::filesystem::path(outside.path()).filename().string() + "/secret",
                "escape-relative");
  tree_.symlink("a.txt", "inside");
  OpenFileCache cache(OpenFileCache::Limits{});
  EXPECT_EQ(cache.acquire(lookup("escape")).error, EXDEV);
  EXPECT_EQ(cache.acquire(lookup("escape-relative")).error, EXDEV);
  EXPECT_EQ(get(cache, lookup("inside")).bytes, "alpha");

  auto never = DocRoot::open(tree_.path(), FollowSymlinks::kNever);
  ASSERT_TRUE(never.ok());
  FileLookup l = lookup("inside");
  l.root = &never.value();
  l.scope = "never";
  EXPECT_EQ(cache.acquire(l).error, ELOOP);
}

TEST_F(OpenFileCacheTest, ASymlinkSwappedInUnderACachedPathIsNotFollowedOut) {
  TempTree outside;
  outside.write("a.txt", "outside!");
  OpenFileCache cache(OpenFileCache::Limits{});
  EXPECT_EQ(get(cache, lookup("a.txt")).bytes, "alpha");
  std::filesystem::remove(tree_.at("a.txt"));
  tree_.symlink(outside.at("a.txt"), "a.txt");
  // The path statx follows the link and sees another inode: reopened beneath the root,
  // which the kernel refuses.
  EXPECT_EQ(cache.acquire(lookup("a.txt")).error, EXDEV);
}

TEST(DocRoot, MissingRootIsAnError) {
  auto root = DocRoot::open("/nonexistent-scalws-root", FollowSymlinks::kBeneath);
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("/nonexistent-scalws-root"), std::string::npos);
  TempTree tree;
  tree.write("file", "x");
  EXPECT_FALSE(DocRoot::open(tree.at("file"), FollowSymlinks::kBeneath).ok());  // not a dir
}

}  // namespace
}  // namespace scalws::worker
