// UdpSocket over loopback: destination addresses from IP_PKTINFO, a GSO train that
// arrives as separate datagrams, and the send queue that sends many trains in one call.
#include "worker/quic/udp_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <cstring>
#include <memory>
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

// A bound loopback socket and its UdpSocket.
struct Peer {
  uint16_t port = 0;
  common::UniqueFd fd;
  std::unique_ptr<UdpSocket> socket;

  Peer() : fd(boundUdp(port)), socket(std::make_unique<UdpSocket>(fd.get())) {
    EXPECT_TRUE(socket->configure().ok());
  }
  // 127.0.0.1 and the port.
  SocketAddress address() const {
    SocketAddress s;
    auto* in = reinterpret_cast<sockaddr_in*>(&s.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &in->sin_addr);
    s.len = sizeof(sockaddr_in);
    return s;
  }
  // Reads until `want` datagrams came (or two seconds passed without one).
  size_t receive(Datagram* got, size_t want) {
    size_t n = 0;
    for (int tries = 0; tries < 10 && n < want; ++tries) {
      pollfd p{fd.get(), POLLIN, 0};
      if (poll(&p, 1, 2000) != 1) break;
      n += socket->receive(std::span<Datagram>(got + n, UdpSocket::kBatch - n));
    }
    return n;
  }
};

TEST(UdpSocket, ReceivesWithBothAddressesAndSendsGsoTrains) {
  Peer a;
  Peer b;
  EXPECT_EQ(a.socket->port(), a.port);

  // Three datagrams of 1000, 1000 and 300 bytes in one send.
  std::vector<uint8_t> train(2300);
  for (size_t i = 0; i < train.size(); ++i) train[i] = static_cast<uint8_t>(i / 1000);
  SocketAddress from = a.address();
  SocketAddress to = b.address();
  a.socket->send(ngtcpAddr(from), ngtcpAddr(to), 0, train.data(), train.size(), 1000);
  EXPECT_EQ(a.socket->queued(), 1u);  // held until the flush
  EXPECT_EQ(a.socket->stats().send_calls, 0u);
  a.socket->flush();
  EXPECT_EQ(a.socket->queued(), 0u);

  Datagram got[UdpSocket::kBatch];
  ASSERT_EQ(b.receive(got, 3), 3u);
  EXPECT_EQ(got[0].len, 1000u);
  EXPECT_EQ(got[1].len, 1000u);
  EXPECT_EQ(got[2].len, 300u);
  EXPECT_EQ(got[2].data[0], 2);
  const auto* local = reinterpret_cast<const sockaddr_in*>(&got[0].local.storage);
  const auto* remote = reinterpret_cast<const sockaddr_in*>(&got[0].remote.storage);
  EXPECT_EQ(ntohs(local->sin_port), b.port);  // the socket's port on the pktinfo address
  EXPECT_EQ(ntohl(local->sin_addr.s_addr), INADDR_LOOPBACK);
  EXPECT_EQ(ntohs(remote->sin_port), a.port);
  EXPECT_EQ(a.socket->stats().datagrams_out, 3u);
  EXPECT_EQ(b.socket->stats().bytes_in, 2300u);
  // The kernel here has UDP_SEGMENT: the three datagrams left in one system call.
  EXPECT_TRUE(a.socket->gso());
  EXPECT_EQ(a.socket->stats().send_calls, 1u);

  // Without GSO (a kernel or device that refused it): the same train, a call per datagram.
  a.socket->disableGsoForTest();
  a.socket->send(ngtcpAddr(from), ngtcpAddr(to), 0, train.data(), train.size(), 1000);
  a.socket->flush();
  ASSERT_EQ(b.receive(got, 3), 3u);
  EXPECT_EQ(got[0].len, 1000u);
  EXPECT_EQ(got[2].len, 300u);
  EXPECT_EQ(got[2].data[0], 2);
  EXPECT_EQ(a.socket->stats().datagrams_out, 6u);
  EXPECT_EQ(a.socket->stats().send_calls, 4u);
}

TEST(UdpSocket, QueuedTrainsToSeveralPeersLeaveInOneCallAndInOrder) {
  Peer a;
  Peer b;
  Peer c;
  SocketAddress from = a.address();
  SocketAddress to_b = b.address();
  SocketAddress to_c = c.address();
  UdpSocket& out = *a.socket;

  // Written in place: a train of two to b, one datagram to c, then one more to b.
  std::span<uint8_t> space = out.sendSpace();
  ASSERT_GE(space.size(), UdpSocket::kMinSpace);
  std::memset(space.data(), 'b', 1200);
  std::memset(space.data() + 1200, 'B', 1000);
  out.send(ngtcpAddr(from), ngtcpAddr(to_b), 0, space.data(), 2200, 1200);
  space = out.sendSpace();
  std::memset(space.data(), 'c', 500);
  out.send(ngtcpAddr(from), ngtcpAddr(to_c), 0, space.data(), 500, 500);
  // From a buffer of the caller's (a Retry, a close packet): copied in behind them.
  std::vector<uint8_t> own(300, 'z');
  out.send(ngtcpAddr(from), ngtcpAddr(to_b), 0, own.data(), own.size(), own.size());
  own.assign(own.size(), 0);  // the queue holds its own copy
  EXPECT_EQ(out.queued(), 3u);
  out.flush();
  EXPECT_EQ(out.stats().send_calls, 1u);
  EXPECT_EQ(out.stats().datagrams_out, 4u);
  EXPECT_EQ(out.stats().bytes_out, 3000u);

  Datagram got[UdpSocket::kBatch];
  ASSERT_EQ(b.receive(got, 3), 3u);
  EXPECT_EQ(got[0].len, 1200u);
  EXPECT_EQ(got[0].data[0], 'b');
  EXPECT_EQ(got[1].len, 1000u);
  EXPECT_EQ(got[1].data[999], 'B');
  EXPECT_EQ(got[2].len, 300u);
  EXPECT_EQ(got[2].data[0], 'z');
  ASSERT_EQ(c.receive(got, 1), 1u);
  EXPECT_EQ(got[0].len, 500u);
  EXPECT_EQ(got[0].data[499], 'c');
}

TEST(UdpSocket, AFullQueueGoesOutOnItsOwn) {
  Peer a;
  Peer b;
  SocketAddress from = a.address();
  SocketAddress to = b.address();
  std::vector<uint8_t> datagram(100, 'q');
  for (size_t i = 0; i < UdpSocket::kQueueMessages; ++i) {
    a.socket->send(ngtcpAddr(from), ngtcpAddr(to), 0, datagram.data(), datagram.size(),
                   datagram.size());
  }
  // The last message filled the queue: it went out without a flush, in one call.
  EXPECT_EQ(a.socket->queued(), 0u);
  EXPECT_EQ(a.socket->stats().send_calls, 1u);
  EXPECT_EQ(a.socket->stats().datagrams_out, UdpSocket::kQueueMessages);
  Datagram got[UdpSocket::kBatch];
  EXPECT_EQ(b.receive(got, UdpSocket::kBatch), UdpSocket::kBatch);
}

}  // namespace
}  // namespace scalws::worker::quic
