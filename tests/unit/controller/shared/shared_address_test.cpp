// SharedAddress without fronts: its channels and the names each worker is told. (The fronts
// themselves, started by the controller, are covered by the integration tests.)
#include "controller/shared/shared_address.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/config/config_loader.h"
#include "controller/instances/instance_listeners.h"

namespace scalws::controller {
namespace {

using Fallback = ipc::SharedAddressNames::Fallback;
using ipc::Json;

class SharedAddressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(uv_loop_init(&uv_), 0);
    auto site = common::config::loadSiteConfigString(
        "[[listen]]\naddress = \"127.0.0.1:8080\"\nnames = [\"a.example\"]\n"
        "[[route]]\nrespond = { body = \"x\" }\n",
        "/etc/scalws/t.toml");
    ASSERT_TRUE(site.ok()) << site.status().message();
    SharedAddress::Env env;
    env.loop = &uv_;
    env.options = &options_;
    address_ = std::make_unique<SharedAddress>(env, "127.0.0.1:8080", site->listens[0]);
  }
  void TearDown() override {
    address_.reset();
    uv_run(&uv_, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&uv_), 0);
  }

  uv_loop_t uv_;
  SharedListenersOptions options_;
  std::unique_ptr<SharedAddress> address_;
};

TEST_F(SharedAddressTest, EachWorkerIsToldItsNamesOthersAndTheDefault) {
  address_->setClaims({{"shop", {"*.shop.example", "shop.example"}, false},
                       {"blog", {"blog.example"}, false},
                       {"home", {}, true},
                       {"late", {}, true}});
  ipc::SharedAddressNames shop = address_->namesFor("shop");
  EXPECT_EQ(shop.address, "127.0.0.1:8080");
  EXPECT_EQ(shop.port, 8080);
  EXPECT_EQ(shop.mine, (std::vector<std::string>{"*.shop.example", "shop.example"}));
  EXPECT_EQ(shop.others, std::vector<std::string>{"blog.example"});
  EXPECT_EQ(shop.fallback, Fallback::kOther);
  EXPECT_EQ(address_->namesFor("home").fallback, Fallback::kMine);
  // A second default (refused by the rules, but a table must still be unambiguous): the
  // first keeps it.
  EXPECT_EQ(address_->namesFor("late").fallback, Fallback::kOther);
  Json shown = address_->describe();
  EXPECT_EQ(shown["default"], "home");
  EXPECT_EQ(shown["instances"].size(), 4u);
  EXPECT_EQ(shown["instances"][3]["default"], false);
}

TEST_F(SharedAddressTest, AChannelPerWorkerLoopKeptAcrossItsWorkers) {
  auto first = address_->channelsFor("shop", 0, 2);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->size(), 2u);
  EXPECT_TRUE(address_->hasMember("shop"));
  // A replacement worker of slot 0 gets the same channels (copies of the same sockets).
  auto again = address_->channelsFor("shop", 0, 2);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(receivingEndName((*again)[1].get()), receivingEndName((*first)[1].get()));
  EXPECT_NE(receivingEndName((*first)[0].get()), receivingEndName((*first)[1].get()));
  // Receiving ends: unix seqpacket sockets with a name each.
  int type = 0;
  socklen_t len = sizeof(type);
  ASSERT_EQ(::getsockopt((*first)[0].get(), SOL_SOCKET, SO_TYPE, &type, &len), 0);
  EXPECT_EQ(type, SOCK_SEQPACKET);
  // A receiving end a front does not hold cannot be adopted.
  EXPECT_EQ(address_->adoptChannel("shop", 1, 0, std::move((*first)[0])).code(),
            common::StatusCode::kNotFound);
}

}  // namespace
}  // namespace scalws::controller

namespace scalws::controller {
namespace {

uint16_t freeUdpPort() {
  common::UniqueFd probe(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (::bind(probe.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return 0;
  ::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

TEST(SharedAddressQuicTest, EachWorkerLoopGetsASocketOfTheGroupUnlessRoutesWouldCollide) {
  uv_loop_t uv;
  ASSERT_EQ(uv_loop_init(&uv), 0);
  SharedListenersOptions options;
  SharedAddress::Env env;
  env.loop = &uv;
  env.options = &options;
  common::config::ListenConfig listen;
  listen.port = freeUdpPort();
  ASSERT_NE(listen.port, 0);
  listen.host = "127.0.0.1";
  listen.address = "127.0.0.1:" + std::to_string(listen.port);
  {
    SharedAddress plain(env, listen.address, listen);
    EXPECT_FALSE(plain.quic());
    EXPECT_FALSE(plain.udpSocketsFor("a", 1).ok());
  }
  listen.http3 = true;
  {
    SharedAddress address(env, listen.address, listen);
    EXPECT_TRUE(address.quic());
    EXPECT_FALSE(address.listen().http3);  // what a front serves: TCP
    // site229599 and site432382 have the same FNV-1a hash, so the same QUIC routes.
    ASSERT_TRUE(address.channelsFor("site229599", 0, 1).ok());
    auto sockets = address.udpSocketsFor("site229599", 2);
    ASSERT_TRUE(sockets.ok()) << sockets.status().message();
    ASSERT_EQ(sockets->size(), 2u);
    for (const common::UniqueFd& fd : *sockets) {
      int type = 0;
      socklen_t len = sizeof(type);
      ::getsockopt(fd.get(), SOL_SOCKET, SO_TYPE, &type, &len);
      EXPECT_EQ(type, SOCK_DGRAM);
      EXPECT_EQ(boundPort(fd.get()), listen.port);
    }
    ASSERT_TRUE(address.channelsFor("site432382", 0, 1).ok());
    auto clash = address.udpSocketsFor("site432382", 1);
    ASSERT_FALSE(clash.ok());
    EXPECT_NE(clash.status().message().find("would share QUIC routes"), std::string::npos)
        << clash.status().message();
    EXPECT_TRUE(address.udpSocketsFor("site1", 1).ok());
  }
  uv_run(&uv, UV_RUN_NOWAIT);
  EXPECT_EQ(uv_loop_close(&uv), 0);
}

}  // namespace
}  // namespace scalws::controller
