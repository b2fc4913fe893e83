#include "ipc/fd_passing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "ipc/message.h"
#include "ipc/unix_socket.h"
#include "ipc_test_util.h"

namespace scalws::ipc {
namespace {

using common::UniqueFd;
using testing::countOpenFds;

bool isCloexec(int fd) {
  return (::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0;
}

ino_t inodeOf(int fd) {
  struct stat st;
  EXPECT_EQ(::fstat(fd, &st), 0);
  return st.st_ino;
}

TEST(FdPassingTest, ThreeFdsIncludingAPipeArriveWorkingAndCloexec) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  auto& [a, b] = *pair;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);  // deliberately without O_CLOEXEC
  UniqueFd pipe_read(pipe_fds[0]), pipe_write(pipe_fds[1]);
  UniqueFd file(::memfd_create("ipc-test", 0));
  ASSERT_TRUE(file);
  ASSERT_EQ(::write(file.get(), "file-content", 12), 12);
  auto other = socketPair();
  ASSERT_TRUE(other.ok());

  std::array<int, 3> sent_fds = {pipe_write.get(), file.get(), other->first.get()};
  auto sent = sendWithFds(a.get(), "frame-bytes", sent_fds);
  ASSERT_TRUE(sent.ok()) << sent.status().message();
  EXPECT_EQ(sent->bytes, 11u);

  std::vector<UniqueFd> received;
  std::array<char, 64> buffer;
  auto got = receiveWithFds(b.get(), buffer, received);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(std::string_view(buffer.data(), got->bytes), "frame-bytes");
  ASSERT_EQ(received.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(isCloexec(received[i].get())) << i;
    EXPECT_NE(received[i].get(), sent_fds[i]) << i;
    EXPECT_EQ(inodeOf(received[i].get()), inodeOf(sent_fds[i])) << i;
  }
  // The pipe works through the received copy, even with the sender's copy closed.
  pipe_write.reset();
  ASSERT_EQ(::write(received[0].get(), "ping", 4), 4);
  char pipe_buffer[8];
  ASSERT_EQ(::read(pipe_read.get(), pipe_buffer, sizeof(pipe_buffer)), 4);
  EXPECT_EQ(std::string_view(pipe_buffer, 4), "ping");
  // The file is the same open file (shared offset): pread sees the content.
  char file_buffer[16];
  ASSERT_EQ(::pread(received[1].get(), file_buffer, sizeof(file_buffer), 0), 12);
  EXPECT_EQ(std::string_view(file_buffer, 12), "file-content");
  // The socket talks to its pair.
  ASSERT_EQ(::send(received[2].get(), "s", 1, 0), 1);
  char socket_buffer;
  ASSERT_EQ(::recv(other->second.get(), &socket_buffer, 1, 0), 1);
}

TEST(FdPassingTest, NoFdsAndEndOfStreamAndWouldBlock) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  std::vector<UniqueFd> fds;
  std::array<char, 16> buffer;
  auto nothing = receiveWithFds(pair->second.get(), buffer, fds);
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->would_block);

  ASSERT_TRUE(sendWithFds(pair->first.get(), "x", {}).ok());
  auto one = receiveWithFds(pair->second.get(), buffer, fds);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->bytes, 1u);
  EXPECT_TRUE(fds.empty());

  pair->first.reset();
  auto eof = receiveWithFds(pair->second.get(), buffer, fds);
  ASSERT_TRUE(eof.ok());
  EXPECT_EQ(eof->bytes, 0u);
  EXPECT_FALSE(eof->would_block);
}

TEST(FdPassingTest, SendToDeadPeerIsAnErrorNotSigpipe) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  pair->second.reset();
  auto sent = sendWithFds(pair->first.get(), "x", {});
  EXPECT_FALSE(sent.ok());
}

TEST(FdPassingTest, FullSocketWouldBlock) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  std::string chunk(64 * 1024, 'x');
  bool blocked = false;
  for (int i = 0; i < 10000 && !blocked; ++i) {
    auto sent = sendWithFds(pair->first.get(), chunk, {});
    ASSERT_TRUE(sent.ok());
    blocked = sent->would_block;
  }
  EXPECT_TRUE(blocked);
}

TEST(FdPassingTest, TooManyFdsAreRefusedBySender) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  std::vector<int> many(kMaxFdsPerFrame + 1, pair->first.get());
  EXPECT_FALSE(sendWithFds(pair->first.get(), "x", many).ok());
}

TEST(FdPassingTest, TruncatedControlDataIsAnErrorAndLeaksNothing) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  UniqueFd file(::memfd_create("ipc-test", MFD_CLOEXEC));
  int before = countOpenFds();
  {
    // A raw sendmsg with more fds than the receiver makes room for.
    constexpr size_t kCount = kMaxFdsPerFrame + 36;
    std::vector<int> fds(kCount, file.get());
    std::vector<char> control(CMSG_SPACE(sizeof(int) * kCount));
    char byte = 'x';
    iovec iov{&byte, 1};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * kCount);
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * kCount);
    ASSERT_EQ(::sendmsg(pair->first.get(), &msg, 0), 1);

    std::vector<UniqueFd> received;
    std::array<char, 16> buffer;
    auto got = receiveWithFds(pair->second.get(), buffer, received);
    EXPECT_FALSE(got.ok());
    EXPECT_TRUE(received.empty());
  }
  EXPECT_EQ(countOpenFds(), before);
}

TEST(UniqueFdTest, OwnsMovesReleasesAndDuplicates) {
  int raw[2];
  ASSERT_EQ(::pipe2(raw, O_CLOEXEC), 0);
  int before = countOpenFds();
  {
    UniqueFd a(raw[0]);
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a.valid());
    EXPECT_EQ(b.get(), raw[0]);
    auto copy = UniqueFd::duplicate(b.get());
    ASSERT_TRUE(copy.ok());
    EXPECT_TRUE(isCloexec(copy->get()));
    EXPECT_EQ(countOpenFds(), before + 1);
    UniqueFd c(raw[1]);
    c = std::move(b);  // closes raw[1]
    EXPECT_EQ(::fcntl(raw[1], F_GETFD), -1);
    int released = c.release();
    EXPECT_EQ(released, raw[0]);
    ::close(released);
  }
  EXPECT_EQ(countOpenFds(), before - 2);
  EXPECT_FALSE(UniqueFd::duplicate(-1).ok());
}

}  // namespace
}  // namespace scalws::ipc
