#include "worker/net/output_queue.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace scalws::worker {
namespace {

struct Owner : RefCounted {
  bool released = false;
  void onLastRelease() noexcept override { released = true; }
};

class OutputQueueTest : public ::testing::Test {
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

TEST_F(OutputQueueTest, MixesOwnedStableAndFileBytesInOrder) {
  char path[] = "/tmp/scalws-oq-XXXXXX";
  int file = mkstemp(path);
  ASSERT_GE(file, 0);
  unlink(path);
  ASSERT_EQ(write(file, "0123456789", 10), 10);

  Owner owner;
  PlainTransport transport(fds_[0]);
  {
    OutputQueue q(pool_);
    q.append("head|");
    static const char kStable[] = "stable|";
    q.appendStable(std::string_view(kStable, 7));
    q.appendFile(FileSlice{file, 2, 5, &owner});
    q.append("|tail");
    EXPECT_EQ(owner.refCountForTest(), 2u);
    EXPECT_EQ(q.pendingBytes(), 5u + 7 + 5 + 5);
    EXPECT_EQ(q.flush(transport), OutputQueue::FlushResult::kDone);
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(owner.refCountForTest(), 1u);  // released once sent
  }
  EXPECT_EQ(drain(), "head|stable|23456|tail");
  close(file);
}

TEST_F(OutputQueueTest, BlocksWhenThePeerDoesNotReadAndResumes) {
  PlainTransport transport(fds_[0]);
  OutputQueue q(pool_);
  std::string big(4 << 20, 'x');
  q.append(big);
  EXPECT_EQ(q.flush(transport), OutputQueue::FlushResult::kBlocked);
  EXPECT_GT(q.pendingBytes(), 0u);
  std::string received;
  while (!q.empty()) {
    received += drain();
    ASSERT_NE(q.flush(transport), OutputQueue::FlushResult::kError);
  }
  received += drain();
  EXPECT_EQ(received.size(), big.size());
}

TEST_F(OutputQueueTest, ClearReleasesFileOwners) {
  Owner owner;
  {
    OutputQueue q(pool_);
    q.appendFile(FileSlice{0, 0, 10, &owner});
    EXPECT_EQ(owner.refCountForTest(), 2u);
  }
  EXPECT_EQ(owner.refCountForTest(), 1u);
}

TEST_F(OutputQueueTest, TruncatedFileIsAnError) {
  char path[] = "/tmp/scalws-oq-XXXXXX";
  int file = mkstemp(path);
  ASSERT_GE(file, 0);
  unlink(path);
  ASSERT_EQ(write(file, "abc", 3), 3);
  PlainTransport transport(fds_[0]);
  OutputQueue q(pool_);
  q.appendFile(FileSlice{file, 0, 10, nullptr});  // promises more than the file holds
  EXPECT_EQ(q.flush(transport), OutputQueue::FlushResult::kError);
  close(file);
}

TEST_F(OutputQueueTest, StorageReturnsToThePool) {
  PlainTransport transport(fds_[0]);
  OutputQueue q(pool_);
  q.append("x");
  EXPECT_EQ(pool_.freeCountForTest(), 0u);
  EXPECT_EQ(q.flush(transport), OutputQueue::FlushResult::kDone);
  EXPECT_EQ(pool_.freeCountForTest(), 1u);
}

}  // namespace
}  // namespace scalws::worker
