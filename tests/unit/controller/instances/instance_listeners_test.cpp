#include "controller/instances/instance_listeners.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "controller/instances/instance_config.h"

namespace scalws::controller {
namespace {

using common::UniqueFd;

common::config::SiteConfig site(uint16_t port, uint16_t port2 = 0) {
  std::string text = "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(port) + "\"\n";
  if (port2 != 0) text += "[[listen]]\naddress = \"127.0.0.1:" + std::to_string(port2) + "\"\n";
  auto loaded = loadInstanceConfig(text, "/t.toml");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return *loaded;
}

// A port nobody listens on right now (bound to 0, read back, closed).
uint16_t freePort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  return boundPort(fd.get());
}

bool listening(int fd) {
  int on = 0;
  socklen_t len = sizeof(on);
  return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on != 0;
}

TEST(InstanceListenersTest, OneSocketPerLoopAndAddressAllSharingThePort) {
  uint16_t a = freePort();
  uint16_t b = freePort();
  auto bound = bindSlotListeners(site(a, b), 2);
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
  auto cfg = site(port);
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

}  // namespace
}  // namespace scalws::controller
