#include "worker/net/byte_queue.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

namespace scalws::worker {
namespace {

struct Owner : RefCounted {
  bool released = false;
  void onLastRelease() noexcept override { released = true; }
};

class ByteQueueTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds_), 0); }
  void TearDown() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  std::string drain() {
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = read(fds_[1], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }
  int fds_[2];
  BufferPool pool_;
};

TEST_F(ByteQueueTest, MixesOwnedStableAndFileBytesInOrder) {
  char path[] = "/tmp/scalws-oq-XXXXXX";
  int file = mkstemp(path);
  ASSERT_GE(file, 0);
  unlink(path);
  ASSERT_EQ(write(file, "0123456789", 10), 10);

  Owner owner;
  PlainTransport transport(fds_[0]);
  {
    ByteQueue q(pool_);
    q.append("head|");
    static const char kStable[] = "stable|";
    q.appendStable(std::string_view(kStable, 7));
    q.appendFile(FileSlice{file, 2, 5, &owner});
    q.append("|tail");
    EXPECT_EQ(owner.refCountForTest(), 2u);
    EXPECT_EQ(q.pendingBytes(), 5u + 7 + 5 + 5);
    EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kDone);
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(owner.refCountForTest(), 1u);  // released once sent
  }
  EXPECT_EQ(drain(), "head|stable|23456|tail");
  close(file);
}

TEST_F(ByteQueueTest, BlocksWhenThePeerDoesNotReadAndResumes) {
  PlainTransport transport(fds_[0]);
  ByteQueue q(pool_);
  std::string big(4 << 20, 'x');
  q.append(big);
  EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kBlocked);
  EXPECT_GT(q.pendingBytes(), 0u);
  std::string received;
  while (!q.empty()) {
    received += drain();
    ASSERT_NE(q.flush(transport), ByteQueue::FlushResult::kError);
  }
  received += drain();
  EXPECT_EQ(received.size(), big.size());
}

TEST_F(ByteQueueTest, ClearReleasesFileOwners) {
  Owner owner;
  {
    ByteQueue q(pool_);
    q.appendFile(FileSlice{0, 0, 10, &owner});
    EXPECT_EQ(owner.refCountForTest(), 2u);
  }
  EXPECT_EQ(owner.refCountForTest(), 1u);
}

TEST_F(ByteQueueTest, TruncatedFileIsAnError) {
  char path[] = "/tmp/scalws-oq-XXXXXX";
  int file = mkstemp(path);
  ASSERT_GE(file, 0);
  unlink(path);
  ASSERT_EQ(write(file, "abc", 3), 3);
  PlainTransport transport(fds_[0]);
  ByteQueue q(pool_);
  q.appendFile(FileSlice{file, 0, 10, nullptr});  // promises more than the file holds
  EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kError);
  close(file);
}

TEST_F(ByteQueueTest, StorageReturnsToThePool) {
  PlainTransport transport(fds_[0]);
  ByteQueue q(pool_);
  q.append("x");
  EXPECT_EQ(pool_.freeCountForTest(), 0u);
  EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kDone);
  EXPECT_EQ(pool_.freeCountForTest(), 1u);
}

// What an HTTP/2 stream reads from the front, segment by segment.
std::string contents(ByteQueue& q) {
  std::string out;
  while (!q.empty()) {
    const ByteQueue::Segment& s = q.front();
    if (s.kind == ByteQueue::Kind::kFile) {
      out += "<" + std::to_string(s.fd) + ":" + std::to_string(s.offset) + "+" +
             std::to_string(s.length) + ">";
    } else {
      out.append(s.data, s.length);
    }
    q.consume(s.length);
  }
  return out;
}

TEST_F(ByteQueueTest, FrontAndConsumeKeepOrderAcrossKinds) {
  ByteQueue q(pool_);
  Owner owner;
  static const char kStable[] = "stable";
  q.append("copy|");
  q.appendStable(kStable);
  q.appendFile(FileSlice{7, 100, 50, &owner});
  q.append("|tail");
  EXPECT_EQ(q.size(), 5u + 6 + 50 + 5);
  EXPECT_EQ(owner.refCountForTest(), 2u);
  EXPECT_EQ(contents(q), "copy|stable<7:100+50>|tail");
  EXPECT_EQ(owner.refCountForTest(), 1u);
}

TEST_F(ByteQueueTest, PartialConsumptionAdvancesWithinSegments) {
  ByteQueue q(pool_);
  Owner owner;
  q.append("abcdef");
  q.appendFile(FileSlice{3, 0, 10, &owner});
  q.consume(4);
  EXPECT_EQ(q.size(), 12u);
  EXPECT_EQ(std::string(q.front().data, q.front().length), "ef");
  q.consume(5);  // "ef" and 3 bytes of the file
  EXPECT_EQ(q.front().offset, 3u);
  EXPECT_EQ(q.front().length, 7u);
  EXPECT_EQ(owner.refCountForTest(), 2u);
  q.clear();
  EXPECT_EQ(owner.refCountForTest(), 1u);
  EXPECT_TRUE(q.empty());
}

TEST_F(ByteQueueTest, AQueueThatNeverEmptiesGivesItsBlocksBack) {
  ByteQueue q(pool_);
  q.append("c");
  std::string chunk(4096, 'd');
  for (int i = 0; i < 1000; ++i) {
    q.append(chunk);
    q.consume(4096);  // one byte always stays behind
  }
  EXPECT_EQ(q.size(), 1u);
  EXPECT_LE(q.blocksForTest(), 2u);
  EXPECT_EQ(contents(q), "d");
  EXPECT_EQ(q.blocksForTest(), 0u);
}

TEST_F(ByteQueueTest, SpansBlocksAndLeavesInOrder) {
  std::string data(3 * BufferPool::kBlockSize + 123, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i % 253);
  size_t free_before = pool_.freeCountForTest();
  {
    PlainTransport transport(fds_[0]);
    ByteQueue q(pool_);
    q.append(std::string_view(data.data(), 100));
    q.append(std::string_view(data.data() + 100, data.size() - 100));
    EXPECT_EQ(q.size(), data.size());
    EXPECT_EQ(q.blocksForTest(), 4u);
    EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kDone);
    EXPECT_TRUE(q.empty());
    // Every block went back to the pool.
    EXPECT_EQ(pool_.freeCountForTest(), free_before + 4);
  }
  EXPECT_EQ(drain(), data);
}

TEST_F(ByteQueueTest, AFullSocketKeepsTheRestForLater) {
  int small = 4096;
  setsockopt(fds_[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
  std::string data(200 * 1024, 'z');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  PlainTransport transport(fds_[0]);
  ByteQueue q(pool_);
  q.append(data);
  EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kBlocked);
  EXPECT_GT(q.size(), 0u);
  EXPECT_LT(q.size(), data.size());
  std::string got;
  for (int i = 0; i < 1000 && !q.empty(); ++i) {
    got += drain();
    q.flush(transport);
  }
  got += drain();
  EXPECT_EQ(got, data);
}

TEST_F(ByteQueueTest, AClosedPeerIsAnError) {
  PlainTransport transport(fds_[0]);
  ByteQueue q(pool_);
  close(fds_[1]);
  fds_[1] = open("/dev/null", O_RDONLY);
  q.append("x");
  signal(SIGPIPE, SIG_IGN);
  EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kError);
  EXPECT_EQ(q.lastErrno(), EPIPE);
}

TEST_F(ByteQueueTest, ReserveLargerThanABlockIsContiguous) {
  PlainTransport transport(fds_[0]);
  ByteQueue q(pool_);
  q.append("head|");
  size_t n = 3 * BufferPool::kBlockSize;
  char* p = q.reserve(n);
  std::memset(p, 'r', n);
  q.commit(n);
  q.append("|end");
  EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kDone);
  EXPECT_EQ(drain(), "head|" + std::string(n, 'r') + "|end");
}

TEST_F(ByteQueueTest, TruncateCutsBackToTheMark) {
  PlainTransport transport(fds_[0]);
  ByteQueue q(pool_);
  Owner owner;
  q.append("kept|");
  ByteQueue::Mark m = q.mark();
  q.append("dropped");                                     // merges into the kept segment's block
  q.append(std::string(2 * BufferPool::kBlockSize, 'x'));  // and spills into more blocks
  q.appendFile(FileSlice{3, 0, 10, &owner});
  EXPECT_EQ(owner.refCountForTest(), 2u);
  ASSERT_TRUE(q.truncate(m));
  EXPECT_EQ(owner.refCountForTest(), 1u);
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.blocksForTest(), 1u);
  q.append("more");
  EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kDone);
  EXPECT_EQ(drain(), "kept|more");
}

TEST_F(ByteQueueTest, NoTruncateOnceAFlushWasTried) {
  PlainTransport transport(fds_[0]);
  ByteQueue q(pool_);
  ByteQueue::Mark m = q.mark();
  q.append("sent");
  EXPECT_EQ(q.flush(transport), ByteQueue::FlushResult::kDone);
  EXPECT_FALSE(q.truncate(m));
  EXPECT_EQ(drain(), "sent");
}

}  // namespace
}  // namespace scalws::worker
