// [real_ip]'s walk through a forwarding header: trusted hops skipped from the right, the
// first untrusted address taken, and what stops the walk.
#include "worker/http/real_ip.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/config/cidr.h"

namespace scalws::worker {
namespace {

std::string text(const sockaddr_storage& a) {
  char out[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&a)->sin_addr, out, sizeof(out));
  } else if (a.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr, out, sizeof(out));
  }
  return out;
}

class RealIpTest : public ::testing::Test {
 protected:
  RealIpTest() {
    for (const char* c : {"10.0.0.0/8", "::1"})
      config_.from.push_back(*common::config::parseCidr(c));
    peer_.address.ss_family = AF_INET;
    inet_pton(AF_INET, "10.0.0.1", &reinterpret_cast<sockaddr_in*>(&peer_.address)->sin_addr);
    request_.peer = &peer_;
    request_.arena = &arena_;
  }
  std::string find(std::vector<std::string> values, std::string_view header = "x-forwarded-for") {
    values_ = std::move(values);
    fields_.clear();
    for (const std::string& v : values_) fields_.push_back({header, v});
    request_.headers = fields_;
    sockaddr_storage client{};
    return findRealClient(config_, request_, client) ? text(client) : "peer";
  }

  common::config::RealIpConfig config_;
  PeerInfo peer_;
  Arena arena_;
  Request request_;
  std::vector<std::string> values_;
  std::vector<HeaderField> fields_;
};

TEST_F(RealIpTest, TheRightmostUntrustedAddress) {
  EXPECT_EQ(find({"203.0.113.1"}), "203.0.113.1");
  EXPECT_EQ(find({"198.51.100.7, 203.0.113.1, 10.2.3.4"}), "203.0.113.1");
  EXPECT_EQ(find({"198.51.100.7", "203.0.113.1,10.2.3.4", " 10.9.9.9 "}), "203.0.113.1");
  EXPECT_EQ(find({"2001:db8::5, ::1"}), "2001:db8::5");
  EXPECT_EQ(find({"[2001:db8::5]:4711"}), "2001:db8::5");
  EXPECT_EQ(find({"203.0.113.1:80"}), "203.0.113.1");
}

TEST_F(RealIpTest, AllTrustedTakesTheLeftmost) {
  EXPECT_EQ(find({"10.1.1.1, 10.2.2.2"}), "10.1.1.1");
}

TEST_F(RealIpTest, GarbageStopsTheWalk) {
  EXPECT_EQ(find({"unknown"}), "peer");
  EXPECT_EQ(find({"203.0.113.1, unknown, 10.2.2.2"}), "10.2.2.2");
  EXPECT_EQ(find({"203.0.113.1, _hidden"}), "peer");
  EXPECT_EQ(find({""}), "peer");
  EXPECT_EQ(find({}), "peer");
}

TEST_F(RealIpTest, OnlyTheConfiguredHeaderAndOnlyFromTrustedPeers) {
  EXPECT_EQ(find({"203.0.113.1"}, "x-real-ip"), "peer");
  config_.header = "x-real-ip";
  EXPECT_EQ(find({"203.0.113.1"}, "X-Real-IP"), "203.0.113.1");
  inet_pton(AF_INET, "192.0.2.1", &reinterpret_cast<sockaddr_in*>(&peer_.address)->sin_addr);
  EXPECT_EQ(find({"203.0.113.1"}, "x-real-ip"), "peer");
}

TEST_F(RealIpTest, ApplyOverridesThePeerForTheRequestOnly) {
  find({"203.0.113.1:4711"});
  applyRealIp(config_, request_);
  ASSERT_NE(request_.peer, &peer_);
  EXPECT_EQ(text(request_.peer->address), "203.0.113.1");
  EXPECT_EQ(ntohs(reinterpret_cast<const sockaddr_in*>(&request_.peer->address)->sin_port), 4711);
  request_.resetForReuse();
  EXPECT_EQ(request_.peer, &peer_);
}

TEST(ForwardedAddress, Forms) {
  sockaddr_storage a;
  EXPECT_TRUE(parseForwardedAddress("192.0.2.1", a));
  EXPECT_TRUE(parseForwardedAddress("::ffff:192.0.2.1", a));
  EXPECT_TRUE(parseForwardedAddress("[::1]", a));
  EXPECT_FALSE(parseForwardedAddress("[::1", a));
  EXPECT_FALSE(parseForwardedAddress("[::1]x", a));
  EXPECT_FALSE(parseForwardedAddress("192.0.2.1:", a));
  EXPECT_FALSE(parseForwardedAddress("192.0.2.1:70000", a));
  EXPECT_FALSE(parseForwardedAddress("example.com", a));
  EXPECT_FALSE(parseForwardedAddress("", a));
  EXPECT_FALSE(parseForwardedAddress(std::string(100, '1'), a));
}

}  // namespace
}  // namespace scalws::worker
