// UdpSocket over loopback: destination addresses from IP_PKTINFO, and a GSO train that
// arrives as separate datagrams.
#include "worker/quic/udp_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>

#include "common/net/listen_socket.h"

namespace scalws::worker::quic {
namespace {

common::UniqueFd boundUdp(uint16_t& port) {
  common::config::ListenConfig listen;
  listen.address = "127.0.0.1:0";
  listen.host = "127.0.0.1";
  auto fd = common::net::bindUdpSocket(listen, false);
  EXPECT_TRUE(fd.ok());
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  getsockname(fd->get(), reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return std::move(fd).value();
}

bool waitReadable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 2000) == 1;
}

TEST(UdpSocket, ReceivesWithBothAddressesAndSendsGsoTrains) {
  uint16_t a_port = 0;
  uint16_t b_port = 0;
  common::UniqueFd a_fd = boundUdp(a_port);
  common::UniqueFd b_fd = boundUdp(b_port);
  UdpSocket a(a_fd.get());
  UdpSocket b(b_fd.get());
  ASSERT_TRUE(a.configure().ok());
  ASSERT_TRUE(b.configure().ok());
  EXPECT_EQ(a.port(), a_port);

  // Three datagrams of 1000, 1000 and 300 bytes in one send.
  std::vector<uint8_t> train(2300);
  for (size_t i = 0; i < train.size(); ++i) train[i] = static_cast<uint8_t>(i / 1000);
  SocketAddress from;
  SocketAddress to;
  *reinterpret_cast<sockaddr_in*>(&from.storage) = sockaddr_in{AF_INET, htons(a_port), {}, {}};
  inet_pton(AF_INET, "127.0.0.1", &reinterpret_cast<sockaddr_in*>(&from.storage)->sin_addr);
  from.len = sizeof(sockaddr_in);
  to = from;
  reinterpret_cast<sockaddr_in*>(&to.storage)->sin_port = htons(b_port);
  a.send(ngtcpAddr(from), ngtcpAddr(to), 0, train.data(), train.size(), 1000);

  ASSERT_TRUE(waitReadable(b_fd.get()));
  Datagram got[UdpSocket::kBatch];
  size_t n = 0;
  for (int tries = 0; tries < 10 && n < 3; ++tries) {
    n += b.receive(std::span<Datagram>(got + n, UdpSocket::kBatch - n));
    if (n < 3) waitReadable(b_fd.get());
  }
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(got[0].len, 1000u);
  EXPECT_EQ(got[1].len, 1000u);
  EXPECT_EQ(got[2].len, 300u);
  EXPECT_EQ(got[2].data[0], 2);
  const auto* local = reinterpret_cast<const sockaddr_in*>(&got[0].local.storage);
  const auto* remote = reinterpret_cast<const sockaddr_in*>(&got[0].remote.storage);
  EXPECT_EQ(ntohs(local->sin_port), b_port);  // the socket's port on the pktinfo address
  EXPECT_EQ(ntohl(local->sin_addr.s_addr), INADDR_LOOPBACK);
  EXPECT_EQ(ntohs(remote->sin_port), a_port);
  EXPECT_EQ(a.stats().datagrams_out, 3u);
  EXPECT_EQ(b.stats().bytes_in, 2300u);
  // The kernel here has UDP_SEGMENT: the three datagrams left in one system call.
  EXPECT_TRUE(a.gso());
  EXPECT_EQ(a.stats().send_calls, 1u);

  // Without GSO (a kernel or device that refused it): the same train, a call per datagram.
  a.disableGsoForTest();
  a.send(ngtcpAddr(from), ngtcpAddr(to), 0, train.data(), train.size(), 1000);
  ASSERT_TRUE(waitReadable(b_fd.get()));
  n = 0;
  for (int tries = 0; tries < 10 && n < 3; ++tries) {
    n += b.receive(std::span<Datagram>(got + n, UdpSocket::kBatch - n));
    if (n < 3) waitReadable(b_fd.get());
  }
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(got[0].len, 1000u);
  EXPECT_EQ(got[2].len, 300u);
  EXPECT_EQ(got[2].data[0], 2);
  EXPECT_EQ(a.stats().datagrams_out, 6u);
  EXPECT_EQ(a.stats().send_calls, 4u);
}

}  // namespace
}  // namespace scalws::worker::quic
