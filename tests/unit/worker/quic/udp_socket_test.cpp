// UdpSocket over loopback: destination addresses from IP_PKTINFO, a GSO train that
// arrives as separate datagrams, and the send queue that sends many trains in one call.
#include "worker/quic/udp_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <cstring>
#include <vector>

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
  EXPECT_EQ(a.queued(), 1u);  // held until the flush
  EXPECT_EQ(a.stats().send_calls, 0u);
  a.flush();
  EXPECT_EQ(a.queued(), 0u);

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
  a.flush();
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

size_t receiveAll(UdpSocket& s, int fd, Datagram* got, size_t want) {
  size_t n = 0;
  for (int tries = 0; tries < 10 && n < want; ++tries) {
    if (!waitReadable(fd)) break;
    n += s.receive(std::span<Datagram>(got + n, UdpSocket::kBatch - n));
  }
  return n;
}

TEST(UdpSocket, QueuedTrainsToSeveralPeersLeaveInOneCallAndInOrder) {
  uint16_t a_port = 0;
  uint16_t b_port = 0;
  uint16_t c_port = 0;
  common::UniqueFd a_fd = boundUdp(a_port);
  common::UniqueFd b_fd = boundUdp(b_port);
  common::UniqueFd c_fd = boundUdp(c_port);
  UdpSocket a(a_fd.get());
  UdpSocket b(b_fd.get());
  UdpSocket c(c_fd.get());
  ASSERT_TRUE(a.configure().ok());
  ASSERT_TRUE(b.configure().ok());
  ASSERT_TRUE(c.configure().ok());
  auto address = [](uint16_t port) {
    SocketAddress s;
    auto* in = reinterpret_cast<sockaddr_in*>(&s.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &in->sin_addr);
    s.len = sizeof(sockaddr_in);
    return s;
  };
  SocketAddress from = address(a_port);
  SocketAddress to_b = address(b_port);
  SocketAddress to_c = address(c_port);

  // Written in place: a train of two to b, one datagram to c, then one more to b.
  std::span<uint8_t> space = a.sendSpace();
  ASSERT_GE(space.size(), UdpSocket::kMinSpace);
  std::memset(space.data(), 'b', 1200);
  std::memset(space.data() + 1200, 'B', 1000);
  a.send(ngtcpAddr(from), ngtcpAddr(to_b), 0, space.data(), 2200, 1200);
  space = a.sendSpace();
  std::memset(space.data(), 'c', 500);
  a.send(ngtcpAddr(from), ngtcpAddr(to_c), 0, space.data(), 500, 500);
  // From a buffer of the caller's (a Retry, a close packet): copied in behind them.
  std::vector<uint8_t> own(300, 'z');
  a.send(ngtcpAddr(from), ngtcpAddr(to_b), 0, own.data(), own.size(), own.size());
  own.assign(own.size(), 0);  // the queue holds its own copy
  EXPECT_EQ(a.queued(), 3u);
  a.flush();
  EXPECT_EQ(a.stats().send_calls, 1u);
  EXPECT_EQ(a.stats().datagrams_out, 4u);
  EXPECT_EQ(a.stats().bytes_out, 3000u);

  Datagram got[UdpSocket::kBatch];
  ASSERT_EQ(receiveAll(b, b_fd.get(), got, 3), 3u);
  EXPECT_EQ(got[0].len, 1200u);
  EXPECT_EQ(got[0].data[0], 'b');
  EXPECT_EQ(got[1].len, 1000u);
  EXPECT_EQ(got[1].data[999], 'B');
  EXPECT_EQ(got[2].len, 300u);
  EXPECT_EQ(got[2].data[0], 'z');
  ASSERT_EQ(receiveAll(c, c_fd.get(), got, 1), 1u);
  EXPECT_EQ(got[0].len, 500u);
  EXPECT_EQ(got[0].data[499], 'c');
}

TEST(UdpSocket, AFullQueueGoesOutOnItsOwn) {
  uint16_t a_port = 0;
  uint16_t b_port = 0;
  common::UniqueFd a_fd = boundUdp(a_port);
  common::UniqueFd b_fd = boundUdp(b_port);
  UdpSocket a(a_fd.get());
  ASSERT_TRUE(a.configure().ok());
  SocketAddress from;
  auto* in = reinterpret_cast<sockaddr_in*>(&from.storage);
  in->sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &in->sin_addr);
  from.len = sizeof(sockaddr_in);
  SocketAddress to = from;
  in->sin_port = htons(a_port);
  reinterpret_cast<sockaddr_in*>(&to.storage)->sin_port = htons(b_port);
  std::vector<uint8_t> datagram(100, 'q');
  for (size_t i = 0; i < UdpSocket::kQueueMessages; ++i) {
    a.send(ngtcpAddr(from), ngtcpAddr(to), 0, datagram.data(), datagram.size(), datagram.size());
  }
  // The 64th message filled the queue: it went out without a flush, in one call.
  EXPECT_EQ(a.queued(), 0u);
  EXPECT_EQ(a.stats().send_calls, 1u);
  EXPECT_EQ(a.stats().datagrams_out, UdpSocket::kQueueMessages);
}

}  // namespace
}  // namespace scalws::worker::quic
