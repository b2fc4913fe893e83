#include "controller/instances/instance_listeners.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/net/listen_socket.h"
#include "controller/instances/instance_config.h"
#include "tests/support/free_port.h"

namespace scalws::controller {
namespace {

using common::UniqueFd;

common::config::SiteConfig listeningSite(uint16_t port, uint16_t port2 = 0) {
  std::string text = "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(port) + "\"\n";
  if (port2 != 0) text += "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(port2) + "\"\n";
  auto loaded = loadInstanceConfig(text, "/t.toml");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return *loaded;
}

using ::scalws::testing::freePort;

bool listening(int fd) {
  int on = 0;
  socklen_t len = sizeof(on);
  return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on != 0;
}

TEST(InstanceListenersTest, OneSocketPerLoopAndAddressAllSharingThePort) {
  uint16_t a = freePort();
  uint16_t b = freePort();
  auto bound = bindSlotListeners(listeningSite(a, b), 2);
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  ASSERT_EQ(bound->fds.size(), 4u);
  ASSERT_EQ(bound->specs.size(), 4u);
  EXPECT_EQ(bound->specs[0].loop, 0u);
  EXPECT_EQ(bound->specs[1].loop, 0u);
  EXPECT_EQ(bound->specs[2].loop, 1u);
  EXPECT_EQ(bound->specs[1].port, b);
  for (const UniqueFd& fd : bound->fds) EXPECT_TRUE(listening(fd.get()));
  EXPECT_EQ(boundPort(bound->fds[2].get()), a);

  EXPECT_EQ(bound->specs[3].loop, 1u);
  EXPECT_EQ(bound->specs[3].port, b);

  auto copies = bound->duplicateFds();
  ASSERT_TRUE(copies.ok());
  ASSERT_EQ(copies->size(), 4u);
  EXPECT_NE((*copies)[0].get(), bound->fds[0].get());
  EXPECT_EQ(boundPort((*copies)[0].get()), a);
}

TEST(InstanceListenersTest, ATakenAddressIsDetectedEvenThroughReusePort) {
  uint16_t port = freePort();
  auto cfg = listeningSite(port);
  ASSERT_TRUE(checkAddressFree(cfg.listens[0]).ok());
  // Someone else (same uid) listens with SO_REUSEPORT: a plain SO_REUSEPORT bind would
  // join their group; the probe must say no.
  auto theirs = bindListener(cfg.listens[0]);
  ASSERT_TRUE(theirs.ok());
  common::Status probe = checkAddressFree(cfg.listens[0]);
  EXPECT_EQ(probe.code(), common::StatusCode::kAlreadyExists);
  EXPECT_NE(probe.message().find("in use"), std::string::npos);
  theirs->reset();
  EXPECT_TRUE(checkAddressFree(cfg.listens[0]).ok());
}

#if SCALWS_HTTP3
common::config::SiteConfig http3Site(uint16_t port) {
  std::string text = "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(port) +
                     "\"\ntls = { cert = \"/c.pem\", key = \"/k.pem\" }\nhttp3 = true\n";
  auto loaded = loadInstanceConfig(text, "/t.toml");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return *loaded;
}

int socketType(int fd) {
  int type = 0;
  socklen_t len = sizeof(type);
  ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len);
  return type;
}

TEST(InstanceListenersTest, Http3GetsAUdpSocketPerLoopNumberedInGroupOrder) {
  uint16_t port = freePort();
  // The second worker slot of an instance whose first had 2 loops: its UDP sockets are the
  // group's third and fourth.
  auto bound = bindSlotListeners(http3Site(port), 2, 2);
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  ASSERT_EQ(bound->fds.size(), 4u);
  EXPECT_FALSE(bound->specs[0].quic);
  EXPECT_TRUE(bound->specs[1].quic);
  EXPECT_EQ(bound->specs[1].steering, 2u);
  EXPECT_EQ(bound->specs[3].steering, 3u);
  EXPECT_EQ(bound->specs[3].loop, 1u);
  EXPECT_EQ(socketType(bound->fds[1].get()), SOCK_DGRAM);
  EXPECT_EQ(socketType(bound->fds[0].get()), SOCK_STREAM);
  EXPECT_EQ(boundPort(bound->fds[3].get()), port);
  ipc::Json json = ipc::ListenersArgs{bound->specs, {}}.encode();
  EXPECT_EQ(json["listeners"][1]["quic"], true);
  EXPECT_EQ(json["listeners"][1]["steering"], 2);
  EXPECT_FALSE(json["listeners"][0].contains("quic"));
  // What the worker decodes is what was bound, and what an attach compares against.
  auto back = ipc::ListenersArgs::decode(json);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->listeners, bound->specs);
  EXPECT_EQ(slotListenerSpecs(http3Site(port), 2, 2), bound->specs);
}

TEST(InstanceListenersTest, ASharedHttp3AddressGivesEachLoopItsChannelThenASendingSocket) {
  std::vector<ipc::ListenerSpec> specs = slotListenerSpecs(http3Site(freePort()), 2, 0, {0});
  ASSERT_EQ(specs.size(), 4u);
  for (uint32_t loop = 0; loop < 2; ++loop) {
    const ipc::ListenerSpec& channel = specs[2 * loop];
    const ipc::ListenerSpec& udp = specs[2 * loop + 1];
    EXPECT_EQ(channel.loop, loop);
    EXPECT_TRUE(channel.handoff && !channel.quic);
    EXPECT_EQ(udp.loop, loop);
    EXPECT_TRUE(udp.handoff && udp.quic);
  }
  // Both flags survive the wire, as a re-attach compares them.
  auto back = ipc::ListenersArgs::decode(ipc::ListenersArgs{specs, {}}.encode());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->listeners, specs);
}

TEST(InstanceListenersTest, AnAddressWhoseUdpPortIsTakenIsNotFree) {
  uint16_t port = freePort();
  auto cfg = http3Site(port);
  ASSERT_TRUE(checkAddressFree(cfg.listens[0]).ok());
  auto theirs = common::net::bindUdpSocket(cfg.listens[0]);
  ASSERT_TRUE(theirs.ok());
  common::Status probe = checkAddressFree(cfg.listens[0]);
  EXPECT_EQ(probe.code(), common::StatusCode::kAlreadyExists);
  EXPECT_NE(probe.message().find("(UDP)"), std::string::npos) << probe.message();
}
#endif

}  // namespace
}  // namespace scalws::controller
