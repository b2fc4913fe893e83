// The reuseport program against the kernel: three UDP sockets in one group, packets shaped
// like QUIC's, and which socket each lands on.
#include "common/net/quic_steering.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace scalws::common::net {
namespace {

struct Group {
  std::vector<UniqueFd> sockets;
  uint16_t port = 0;
};

config::ListenConfig listenOn(uint16_t port) {
  config::ListenConfig listen;
  listen.address = "127.0.0.1:" + std::to_string(port);
  listen.host = "127.0.0.1";
  listen.port = port;
  return listen;
}

Group makeGroup(size_t n) {
  Group g;
  Result<UniqueFd> first = bindSteeredSocket(listenOn(0));
  EXPECT_TRUE(first.ok()) << first.status().message();
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(first->get(), reinterpret_cast<sockaddr*>(&addr), &len);
  g.port = ntohs(addr.sin_port);
  g.sockets.push_back(std::move(first).value());
  for (size_t i = 1; i < n; ++i) {
    Result<UniqueFd> next = bindSteeredSocket(listenOn(g.port));
    EXPECT_TRUE(next.ok()) << next.status().message();
    g.sockets.push_back(std::move(next).value());
  }
  return g;
}

// Sends `packet` to the group's port and returns the index of the socket that got it.
int deliveredTo(Group& g, const std::vector<uint8_t>& packet, int sender_fd) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(g.port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(sendto(sender_fd, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&to),
                   sizeof(to)),
            static_cast<ssize_t>(packet.size()));
  std::vector<pollfd> fds;
  for (auto& s : g.sockets) fds.push_back(pollfd{s.get(), POLLIN, 0});
  if (poll(fds.data(), fds.size(), 2000) <= 0) return -1;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents & POLLIN) {
      char buf[2048];
      recv(fds[i].fd, buf, sizeof(buf), 0);
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::vector<uint8_t> shortHeader(uint8_t b1, uint8_t b2) {
  std::vector<uint8_t> p(40, 0x55);
  p[0] = 0x40;
  p[1] = b1;
  p[2] = b2;
  return p;
}

std::vector<uint8_t> longHeader(uint8_t dcid_len, uint8_t b1, uint8_t b2) {
  std::vector<uint8_t> p(60, 0x55);
  p[0] = 0xc0;  // Initial
  p[1] = 0, p[2] = 0, p[3] = 0, p[4] = 1;
  p[5] = dcid_len;
  p[6] = b1;
  p[7] = b2;
  return p;
}

class SteeringProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    group_ = makeGroup(3);
    sender_ = UniqueFd(socket(AF_INET, SOCK_DGRAM, 0));
  }
  Group group_;
  UniqueFd sender_;
};

TEST_F(SteeringProgram, ShortHeaderGoesToTheSocketItsConnectionIdNames) {
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(deliveredTo(group_, shortHeader(0, 2), sender_.get()), 2);
    EXPECT_EQ(deliveredTo(group_, shortHeader(0, 1), sender_.get()), 1);
    EXPECT_EQ(deliveredTo(group_, shortHeader(0, 0), sender_.get()), 0);
  }
}

TEST_F(SteeringProgram, LongHeaderReadsTheDcidAfterItsLength) {
  EXPECT_EQ(deliveredTo(group_, longHeader(16, 0, 1), sender_.get()), 1);
  EXPECT_EQ(deliveredTo(group_, longHeader(16, 0, 2), sender_.get()), 2);
}

TEST_F(SteeringProgram, UnknownIdsFallBackToTheHashConsistently) {
  // An id past the group (a client's random DCID) or a DCID too short to carry one: the
  // kernel's 4-tuple hash, the same socket every time for one sender.
  int first = deliveredTo(group_, shortHeader(0x7f, 0x33), sender_.get());
  ASSERT_GE(first, 0);
  EXPECT_EQ(deliveredTo(group_, shortHeader(0x11, 0x99), sender_.get()), first);
  EXPECT_EQ(deliveredTo(group_, longHeader(1, 0, 2), sender_.get()), first);
}

std::vector<uint8_t> longHeaderOfType(uint8_t type_bits, uint32_t version,
                                      std::vector<uint8_t> dcid) {
  std::vector<uint8_t> p(1200, 0x55);  // clients pad Initial datagrams to 1200 bytes
  p[0] = static_cast<uint8_t>(0xc0 | type_bits);
  p[1] = static_cast<uint8_t>(version >> 24), p[2] = static_cast<uint8_t>(version >> 16);
  p[3] = static_cast<uint8_t>(version >> 8), p[4] = static_cast<uint8_t>(version);
  p[5] = static_cast<uint8_t>(dcid.size());
  std::copy(dcid.begin(), dcid.end(), p.begin() + 6);
  return p;
}

constexpr uint8_t kInitial = 0x00;
constexpr uint8_t kZeroRtt = 0x10;
constexpr uint8_t kHandshake = 0x20;

// Four sockets: 0 and 1 read by a draining generation, 2 and 3 by the new one.
class GenerationProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    group_ = makeGroup(4);
    Status attached = attachProgram(group_.sockets[0].get(), generationSteeringProgram({2, 3}));
    ASSERT_TRUE(attached.ok()) << attached.message();
    sender_ = UniqueFd(socket(AF_INET, SOCK_DGRAM, 0));
  }
  int deliver(const std::vector<uint8_t>& packet) {
    return deliveredTo(group_, packet, sender_.get());
  }
  Group group_;
  UniqueFd sender_;
};

TEST_F(GenerationProgram, TheDrainingGenerationKeepsItsConnections) {
  EXPECT_EQ(deliver(shortHeader(0, 0)), 0);
  EXPECT_EQ(deliver(shortHeader(0, 1)), 1);
  EXPECT_EQ(deliver(longHeaderOfType(kHandshake, 1, {0, 1, 7, 7, 7, 7, 7, 7})), 1);
  EXPECT_EQ(deliver(shortHeader(0, 3)), 3);
  EXPECT_EQ(deliver(longHeaderOfType(kHandshake, 1, {0, 2, 7, 7, 7, 7, 7, 7})), 2);
}

TEST_F(GenerationProgram, NewConnectionsReachOnlyTheNewGeneration) {
  // A later Initial carrying an ID of the new generation: its socket.
  EXPECT_EQ(deliver(longHeaderOfType(kInitial, 1, {0, 3, 9, 9, 9, 9, 9, 9})), 3);
  EXPECT_EQ(deliver(longHeaderOfType(kInitial, 1, {0, 2, 9, 9, 9, 9, 9, 9})), 2);
  // A client's random DCID, even one that happens to name a draining socket: bytes 2-3
  // modulo two pick the new generation's first or second socket, every time.
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(deliver(longHeaderOfType(kInitial, 1, {0, 1, 0, 4, 1, 2, 3, 4})), 2);
    EXPECT_EQ(deliver(longHeaderOfType(kInitial, 1, {0, 0, 0, 5, 1, 2, 3, 4})), 3);
    EXPECT_EQ(deliver(longHeaderOfType(kInitial, 1, {0xab, 0xcd, 0x12, 0x35, 5, 6, 7, 8})), 3);
    EXPECT_EQ(deliver(longHeaderOfType(kZeroRtt, 1, {0, 1, 0, 4, 1, 2, 3, 4})), 2);
  }
  // Too short a DCID to pick with: the new generation's first socket.
  EXPECT_EQ(deliver(longHeaderOfType(kInitial, 1, {0, 1})), 2);
}

TEST_F(GenerationProgram, OtherVersionsAreSteeredByTheIdTheyCarry) {
  EXPECT_EQ(deliver(longHeaderOfType(kInitial, 0x6b3343cf, {0, 1, 0, 4, 1, 2, 3, 4})), 1);
  EXPECT_EQ(deliver(longHeaderOfType(kInitial, 0, {0, 0, 0, 5, 1, 2, 3, 4})), 0);
}

// A shared address's group: the front's socket first, then workers' sockets that only send.
TEST(SharedGroupProgram, EveryDatagramReachesTheFirstSocket) {
  Group g;
  Result<UniqueFd> first = bindSharedGroupSocket(listenOn(0));
  ASSERT_TRUE(first.ok()) << first.status().message();
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(first->get(), reinterpret_cast<sockaddr*>(&addr), &len);
  g.port = ntohs(addr.sin_port);
  g.sockets.push_back(std::move(first).value());
  for (int i = 0; i < 3; ++i) {
    Result<UniqueFd> worker = bindUdpSocket(listenOn(g.port));
    ASSERT_TRUE(worker.ok()) << worker.status().message();
    g.sockets.push_back(std::move(worker).value());
  }
  // Many senders (many 4-tuples for the kernel's hash) and every shape of header.
  for (int sender = 0; sender < 8; ++sender) {
    UniqueFd from(socket(AF_INET, SOCK_DGRAM, 0));
    EXPECT_EQ(deliveredTo(g, shortHeader(0, 2), from.get()), 0);
    EXPECT_EQ(deliveredTo(g, shortHeader(0x7f, static_cast<uint8_t>(sender)), from.get()), 0);
    EXPECT_EQ(deliveredTo(g, longHeader(16, 0, 3), from.get()), 0);
    EXPECT_EQ(deliveredTo(g, std::vector<uint8_t>{1}, from.get()), 0);
  }
}

}  // namespace
}  // namespace scalws::common::net
