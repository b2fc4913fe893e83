// Listening sockets: what accepted connections inherit from them.
#include "common/net/listen_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace scalws::common::net {
namespace {

TEST(ListenSocket, AcceptedSocketsInheritNoDelay) {
  config::ListenConfig listen;
  listen.address = "127.0.0.1:0";
  listen.host = "127.0.0.1";
  listen.port = 0;
  Result<UniqueFd> fd = openListenSocket(listen);
  ASSERT_TRUE(fd.ok()) << fd.status().message();
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd->get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), len), 0);
  int accepted = -1;
  for (int i = 0; i < 100 && accepted < 0; ++i) {
    accepted = accept4(fd->get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (accepted < 0) usleep(1000);
  }
  ASSERT_GE(accepted, 0);
  int nodelay = 0;
  socklen_t size = sizeof(nodelay);
  ASSERT_EQ(getsockopt(accepted, IPPROTO_TCP, TCP_NODELAY, &nodelay, &size), 0);
  EXPECT_NE(nodelay, 0);  // no setsockopt per accepted connection needed
  close(accepted);
  close(client);
}

}  // namespace
}  // namespace scalws::common::net
