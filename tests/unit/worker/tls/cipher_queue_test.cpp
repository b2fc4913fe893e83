#include "worker/tls/cipher_queue.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>

namespace scalws::worker::tls {
namespace {

class CipherQueueTest : public ::testing::Test {
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

TEST_F(CipherQueueTest, SpansBlocksAndLeavesInOrder) {
  std::string data(3 * BufferPool::kBlockSize + 123, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i % 253);
  size_t free_before = pool_.freeCountForTest();
  {
    CipherQueue q(pool_);
    q.append(data.data(), 100);
    q.append(data.data() + 100, data.size() - 100);
    EXPECT_EQ(q.size(), data.size());
    EXPECT_EQ(q.flush(fds_[0]), CipherQueue::Flush::kDone);
    EXPECT_TRUE(q.empty());
    // Every block went back to the pool.
    EXPECT_EQ(pool_.freeCountForTest(), free_before + 4);
  }
  EXPECT_EQ(drain(), data);
}

TEST_F(CipherQueueTest, AFullSocketKeepsTheRestForLater) {
  int small = 4096;
  setsockopt(fds_[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
  std::string data(200 * 1024, 'z');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  CipherQueue q(pool_);
  q.append(data.data(), data.size());
  EXPECT_EQ(q.flush(fds_[0]), CipherQueue::Flush::kBlocked);
  EXPECT_GT(q.size(), 0u);
  EXPECT_LT(q.size(), data.size());
  std::string got;
  for (int i = 0; i < 1000 && !q.empty(); ++i) {
    got += drain();
    q.flush(fds_[0]);
  }
  got += drain();
  EXPECT_EQ(got, data);
}

TEST_F(CipherQueueTest, AClosedPeerIsAnError) {
  CipherQueue q(pool_);
  close(fds_[1]);
  fds_[1] = open("/dev/null", O_RDONLY);
  q.append("x", 1);
  signal(SIGPIPE, SIG_IGN);
  EXPECT_EQ(q.flush(fds_[0]), CipherQueue::Flush::kError);
  EXPECT_EQ(errno, EPIPE);
}

}  // namespace
}  // namespace scalws::worker::tls
