#include "ipc/unix_socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "ipc_test_util.h"

namespace scalws::ipc {
namespace {

using common::StatusCode;
using testing::TempDir;
using namespace std::chrono_literals;

bool flagsSet(int fd) {
  return (::fcntl(fd, F_GETFD) & FD_CLOEXEC) && (::fcntl(fd, F_GETFL) & O_NONBLOCK);
}

TEST(UnixSocketTest, SocketPairIsConnectedCloexecAndNonBlocking) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  EXPECT_TRUE(flagsSet(pair->first.get()));
  EXPECT_TRUE(flagsSet(pair->second.get()));
  ASSERT_EQ(::send(pair->first.get(), "x", 1, 0), 1);
  char c;
  EXPECT_EQ(::recv(pair->second.get(), &c, 1, 0), 1);
}

TEST(UnixSocketTest, ListenAcceptsConnectionsAndReplacesAStaleSocket) {
  TempDir dir;
  std::string path = dir.file("control.sock");
  {
    auto first = listenUnix(path);
    ASSERT_TRUE(first.ok()) << first.status().message();
  }  // closed: the socket file stays behind, stale
  auto listener = listenUnix(path);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  EXPECT_TRUE(flagsSet(listener->get()));
  auto client = connectUnix(path, 1s);
  ASSERT_TRUE(client.ok()) << client.status().message();
  EXPECT_TRUE(flagsSet(client->get()));
  int accepted = ::accept4(listener->get(), nullptr, nullptr, SOCK_CLOEXEC);
  EXPECT_GE(accepted, 0);
  ::close(accepted);
}

TEST(UnixSocketTest, ListenNeverReplacesAFileThatIsNotASocket) {
  TempDir dir;
  std::string path = dir.file("state.db");
  std::ofstream(path) << "precious";
  auto listener = listenUnix(path);
  ASSERT_FALSE(listener.ok());
  EXPECT_EQ(listener.status().code(), StatusCode::kAlreadyExists);
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

TEST(UnixSocketTest, ConnectFailuresSayWhy) {
  TempDir dir;
  auto missing = connectUnix(dir.file("nothing.sock"), 100ms);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  std::string path = dir.file("dead.sock");
  { ASSERT_TRUE(listenUnix(path).ok()); }  // nobody listens any more
  auto refused = connectUnix(path, 100ms);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);

  auto too_long = connectUnix("/" + std::string(200, 'a'), 100ms);
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.status().code(), StatusCode::kInvalidArgument);
}

TEST(UnixSocketTest, ConnectTimesOutWhileTheBacklogIsFull) {
  TempDir dir;
  std::string path = dir.file("busy.sock");
  auto listener = listenUnix(path, 0);
  ASSERT_TRUE(listener.ok());
  std::vector<common::UniqueFd> queued;
  common::Status last;
  for (int i = 0; i < 64 && last.ok(); ++i) {  // nobody accepts: the backlog fills
    auto client = connectUnix(path, 50ms);
    if (client.ok()) {
      queued.push_back(std::move(*client));
    } else {
      last = client.status();
    }
  }
  EXPECT_EQ(last.code(), StatusCode::kTimeout) << last.message();
}

}  // namespace
}  // namespace scalws::ipc
