// QuicFront with socketpair channels standing for worker loops: a client's Initial goes to
// the instance its server name names (held while the name is still to come), later
// datagrams follow the connection by its ID (the route a worker wrote into it, or the ID
// the client chose, remembered), and what no worker can use is dropped and counted.
#include "front/quic_front.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>

#include "common/net/listen_socket.h"
#include "ipc/forwarded_datagram.h"
#include "tests/unit/front/quic_test_client.h"
#include "tests/unit/front/route_with_channels.h"

namespace scalws::front {
namespace {

using namespace test;  // the test client (quic_test_client.h)

class QuicFrontTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(uv_loop_init(&uv_), 0);
    common::config::ListenConfig listen;
    listen.address = "127.0.0.1:0";
    listen.host = "127.0.0.1";
    auto udp = common::net::bindUdpSocket(listen, false);
    ASSERT_TRUE(udp.ok()) << udp.status().message();
    auto made = QuicFront::create(&uv_, std::move(udp).value(), counters_, handoffs_);
    ASSERT_TRUE(made.ok()) << made.status().message();
    front_ = std::move(made).value();
  }
  void TearDown() override {
    front_->close();
    uv_run(&uv_, UV_RUN_NOWAIT);
    front_.reset();
    EXPECT_EQ(uv_loop_close(&uv_), 0);
  }

  // An instance with `loops` worker loops of slot 0; returns the worker ends.
  std::vector<common::UniqueFd> route(const std::string& instance, std::vector<std::string> names,
                                      bool is_default, uint32_t loops) {
    test::RouteWithChannels r =
        test::routeWithChannels(instance, std::move(names), is_default, loops);
    routes_ = RouteTable::with(*routes_, r.route);
    front_->setRoutes(routes_);
    return std::move(r.workers);
  }

  void dispatch(const Bytes& bytes, uint16_t client_port = 40000, uint64_t now_ms = 1000) {
    common::net::Datagram d;
    auto* remote = reinterpret_cast<sockaddr_in*>(&d.remote.storage);
    remote->sin_family = AF_INET;
    remote->sin_port = htons(client_port);
    remote->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d.remote.len = sizeof(sockaddr_in);
    auto* local = reinterpret_cast<sockaddr_in*>(&d.local.storage);
    local->sin_family = AF_INET;
    local->sin_port = htons(443);
    local->sin_addr.s_addr = htonl(0x7f000002);
    d.local.len = sizeof(sockaddr_in);
    d.ecn = 2;
    d.data = bytes.data();
    d.len = bytes.size();
    front_->dispatch(d, now_ms);
    front_->flush();
  }

  // The next datagram a worker end got, or nullopt when none waits.
  static std::optional<Bytes> received(const common::UniqueFd& worker) {
    uint8_t buffer[4096];
    ssize_t n = ::recv(worker.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n <= 0) return std::nullopt;
    common::net::Datagram d;
    common::Status decoded =
        ipc::decodeForwardedDatagram(std::span<const uint8_t>(buffer, static_cast<size_t>(n)), d);
    EXPECT_TRUE(decoded.ok()) << decoded.message();
    if (!decoded.ok()) return std::nullopt;
    auto* local = reinterpret_cast<const sockaddr_in*>(&d.local.storage);
    auto* remote = reinterpret_cast<const sockaddr_in*>(&d.remote.storage);
    EXPECT_EQ(ntohl(local->sin_addr.s_addr), 0x7f000002u);
    EXPECT_EQ(ntohs(local->sin_port), 443);
    EXPECT_EQ(ntohl(remote->sin_addr.s_addr), static_cast<uint32_t>(INADDR_LOOPBACK));
    EXPECT_EQ(d.ecn, 2);
    return Bytes(d.data, d.data + d.len);
  }

  static Bytes clientInitial(const Bytes& dcid, std::string_view name, uint64_t offset = 0,
                             size_t before = 0) {
    Initial in;
    in.dcid = dcid;
    Bytes hello = quicClientHello(name, before);
    in.frames = cryptoFrame(offset, hello);
    in.pad_to = 1200;
    return seal(in);
  }

  static Bytes shortHeader(std::span<const uint8_t> dcid) {
    Bytes d{0x41};
    d.insert(d.end(), dcid.begin(), dcid.end());
    d.resize(60, 0x33);
    return d;
  }

  uv_loop_t uv_{};
  ipc::FrontCounters counters_;
  QuicFront::Handoffs handoffs_;
  std::shared_ptr<const RouteTable> routes_ = std::make_shared<RouteTable>();
  std::unique_ptr<QuicFront> front_;
};

const Bytes kClientDcid = {1, 2, 3, 4, 5, 6, 7, 8};

TEST_F(QuicFrontTest, AnInitialGoesToTheInstanceItsServerNameNames) {
  auto shop = route("shop", {"shop.test"}, false, 1);
  auto home = route("home", {}, true, 1);
  Bytes initial = clientInitial(kClientDcid, "shop.test");
  dispatch(initial);
  EXPECT_EQ(received(shop[0]), initial);
  EXPECT_EQ(received(home[0]), std::nullopt);
  EXPECT_EQ(counters_.quic_routed, 1u);
  EXPECT_EQ(counters_.quic_forwarded, 1u);
  EXPECT_EQ(handoffs_["shop"], 1u);
  // Another name goes to the default; so does a ClientHello without one.
  Bytes other = clientInitial({9, 9, 9, 9, 9, 9, 9, 9}, "other.test");
  dispatch(other);
  EXPECT_EQ(received(home[0]), other);
  Bytes unnamed = clientInitial({8, 8, 8, 8, 8, 8, 8, 8}, "");
  dispatch(unnamed);
  EXPECT_EQ(received(home[0]), unnamed);
  EXPECT_EQ(received(shop[0]), std::nullopt);
}

TEST_F(QuicFrontTest, ANameNobodyClaimsWithoutADefaultIsDropped) {
  auto shop = route("shop", {"shop.test"}, false, 1);
  dispatch(clientInitial(kClientDcid, "blog.test"));
  EXPECT_EQ(received(shop[0]), std::nullopt);
  EXPECT_EQ(counters_.unknown_name, 1u);
  EXPECT_EQ(counters_.quic_dropped, 1u);
  EXPECT_EQ(front_->pendingForTest(), 0u);
}

TEST_F(QuicFrontTest, AHelloSplitAcrossDatagramsIsHeldThenPassedOnInOrder) {
  auto shop = route("shop", {"shop.test"}, false, 1);
  auto home = route("home", {}, true, 1);
  // A ClientHello with a 1.5 KB share ahead of its server name, in two Initials.
  Bytes hello = quicClientHello("shop.test", 1500);
  Initial first;
  first.dcid = kClientDcid;
  first.frames = cryptoFrame(0, std::span<const uint8_t>(hello).first(1000));
  first.pad_to = 1200;
  Initial second = first;
  second.packet_number = 1;
  second.frames = cryptoFrame(1000, std::span<const uint8_t>(hello).subspan(1000));
  Bytes a = seal(first);
  Bytes b = seal(second);
  dispatch(a);
  EXPECT_EQ(received(shop[0]), std::nullopt);
  EXPECT_EQ(received(home[0]), std::nullopt);
  EXPECT_EQ(front_->pendingForTest(), 1u);
  dispatch(b);
  EXPECT_EQ(received(shop[0]), a);
  EXPECT_EQ(received(shop[0]), b);
  EXPECT_EQ(front_->pendingForTest(), 0u);
  EXPECT_EQ(counters_.quic_forwarded, 2u);
}

TEST_F(QuicFrontTest, LaterDatagramsFollowTheirConnection) {
  auto shop = route("shop", {"shop.test"}, false, 2);
  Bytes initial = clientInitial(kClientDcid, "shop.test");
  dispatch(initial);
  size_t chosen = received(shop[0]) ? 0 : 1;
  if (chosen == 1) {
    EXPECT_EQ(received(shop[1]), initial);
  }
  // The client's repeated Initial (same ID) reaches the same loop, even from a new port.
  dispatch(initial, 40001);
  EXPECT_EQ(received(shop[chosen]), initial);
  EXPECT_EQ(front_->knownForTest(), 1u);
  // IDs a worker issued start with its route: slot 0, loop 1 of shop.
  common::net::QuicRoute route = common::net::quicRouteOf("shop", 0, 1);
  Bytes cid(route.begin(), route.end());
  cid.resize(16, 0xab);
  Bytes packet = shortHeader(cid);
  dispatch(packet, 40002);
  EXPECT_EQ(received(shop[1]), packet);
  EXPECT_EQ(received(shop[0]), std::nullopt);
  // A long header carrying it too (a Handshake packet).
  Bytes handshake = unreadPacket(LongHeader::Type::kHandshake, cid);
  dispatch(handshake);
  EXPECT_EQ(received(shop[1]), handshake);
  // The route of a loop nobody has, or of another instance: dropped.
  common::net::QuicRoute gone = common::net::quicRouteOf("shop", 0, 7);
  Bytes stale(gone.begin(), gone.end());
  stale.resize(16, 0xab);
  uint64_t dropped = counters_.quic_dropped;
  dispatch(shortHeader(stale));
  EXPECT_EQ(counters_.quic_dropped, dropped + 1);
  EXPECT_EQ(received(shop[0]), std::nullopt);
  EXPECT_EQ(received(shop[1]), std::nullopt);
}

TEST_F(QuicFrontTest, RememberedIdsExpire) {
  auto shop = route("shop", {"shop.test"}, false, 1);
  dispatch(clientInitial(kClientDcid, "shop.test"), 40000, 1000);
  EXPECT_EQ(front_->knownForTest(), 1u);
  dispatch(shortHeader(Bytes(16, 0)), 40000, 1000 + QuicFront::kKnownTtlMs + 1);
  EXPECT_EQ(front_->knownForTest(), 0u);
}

TEST_F(QuicFrontTest, WhatNoWorkerCanUseIsDropped) {
  auto shop = route("shop", {"shop.test"}, false, 1);
  Bytes initial = clientInitial(kClientDcid, "shop.test");
  Bytes damaged = initial;
  damaged[initial.size() - 20] ^= 1;  // fails authentication
  Bytes zero_rtt = unreadPacket(LongHeader::Type::kZeroRtt);
  Bytes unknown_version = initial;
  unknown_version[4] = 9;
  for (const Bytes& d : {damaged, zero_rtt, unknown_version, Bytes{0x40, 1, 2}, Bytes{},
                         shortHeader(Bytes(16, 0x55))}) {
    dispatch(d);
  }
  EXPECT_EQ(received(shop[0]), std::nullopt);
  EXPECT_EQ(counters_.quic_dropped, 6u);
  EXPECT_EQ(counters_.quic_routed, 0u);
  EXPECT_EQ(front_->pendingForTest(), 0u);
  // The damaged copy left nothing behind: the good one still routes.
  dispatch(initial);
  EXPECT_EQ(received(shop[0]), initial);
}

TEST_F(QuicFrontTest, PendingHandshakesAreBounded) {
  auto shop = route("shop", {"shop.test"}, false, 1);
  // Halves of hellos that never complete.
  Bytes hello = quicClientHello("shop.test", 1500);
  for (size_t i = 0; i < QuicFront::kMaxPending + 10; ++i) {
    Initial half;
    half.dcid = {9, 8, 7, 6, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i), 0, 0};
    half.frames = cryptoFrame(0, std::span<const uint8_t>(hello).first(1000));
    half.pad_to = 1200;
    dispatch(seal(half), 40000, 1000 + i);
  }
  EXPECT_EQ(front_->pendingForTest(), QuicFront::kMaxPending);
  EXPECT_EQ(received(shop[0]), std::nullopt);
  // ... and they are forgotten once too old.
  dispatch(Bytes{0x40, 1, 2}, 40000, 1000 + 10 * QuicFront::kPendingTtlMs);
  EXPECT_EQ(front_->pendingForTest(), 0u);
}

}  // namespace
}  // namespace scalws::front
