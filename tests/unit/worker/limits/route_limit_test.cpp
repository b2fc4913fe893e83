// A route's limit as the dispatcher applies it: the rule from the config, which client a
// request is (its key header, else its address), and the verdicts.
#include "worker/limits/route_limit.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <vector>

namespace scalws::worker::limits {
namespace {

constexpr uint64_t kSecond = 1000000000ull;

common::config::LimitConfig limitConfig(uint32_t rate, uint32_t per, uint32_t burst,
                                        uint32_t connections, std::string key = "") {
  common::config::LimitConfig c;
  c.rate = rate;
  c.per_seconds = per;
  c.burst = burst;
  c.connections = connections;
  c.key = std::move(key);
  return c;
}

class RouteLimitTest : public ::testing::Test {
 protected:
  RouteLimitTest() {
    auto made = SharedLimits::create(64 << 10);
    EXPECT_TRUE(made.ok()) << made.status().message();
    table_ = *made;
    request_.arena = &arena_;
    request_.peer = &peer_;
    from("192.0.2.1");
  }
  void from(const char* v4) {
    peer_.address = {};
    peer_.address.ss_family = AF_INET;
    inet_pton(AF_INET, v4, &reinterpret_cast<sockaddr_in*>(&peer_.address)->sin_addr);
  }
  void withHeader(std::string_view name, std::string_view value) {
    fields_ = {{name, value}};
    request_.headers = fields_;
  }
  LimitVerdict check(const RouteLimit& limit, uint64_t now = 100 * kSecond) {
    return checkLimit(limit, *table_, request_, now);
  }

  std::shared_ptr<SharedLimits> table_;
  PeerInfo peer_;
  Arena arena_;
  Request request_;
  std::vector<HeaderField> fields_;
};

TEST_F(RouteLimitTest, TheRuleFromTheConfig) {
  RouteLimit per_minute = makeRouteLimit(limitConfig(10, 60, 5, 4), nullptr);
  EXPECT_EQ(per_minute.rule.interval_ns, 6 * kSecond);
  EXPECT_EQ(per_minute.rule.tolerance_ns, 30 * kSecond);
  EXPECT_EQ(per_minute.rule.connections, 4u);
  RouteLimit connections_only = makeRouteLimit(limitConfig(0, 1, 0, 2), nullptr);
  EXPECT_EQ(connections_only.rule.interval_ns, 0u);
  // The same scope and values: the same id (a reload keeps the counts); another scope or
  // other values: another limit.
  common::config::RouteConfig login, api;
  login.match.prefix = "/login";
  api.match.prefix = "/api";
  auto c = limitConfig(10, 60, 5, 4);
  EXPECT_EQ(makeRouteLimit(c, &login).rule.id, makeRouteLimit(c, &login).rule.id);
  EXPECT_NE(makeRouteLimit(c, &login).rule.id, makeRouteLimit(c, &api).rule.id);
  EXPECT_NE(makeRouteLimit(c, &login).rule.id, makeRouteLimit(c, nullptr).rule.id);
  EXPECT_NE(makeRouteLimit(c, &login).rule.id,
            makeRouteLimit(limitConfig(10, 60, 6, 4), &login).rule.id);
}

TEST_F(RouteLimitTest, ByAddressThenRetryAfter) {
  RouteLimit limit = makeRouteLimit(limitConfig(1, 60, 1, 0), nullptr);
  EXPECT_EQ(check(limit).status, 0);
  EXPECT_EQ(check(limit).status, 0);
  LimitVerdict refused = check(limit);
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.retry_after_s, 60u);
  from("192.0.2.2");  // another client
  EXPECT_EQ(check(limit).status, 0);
}

TEST_F(RouteLimitTest, ByKeyHeaderElseByAddress) {
  RouteLimit limit = makeRouteLimit(limitConfig(1, 60, 0, 0, "x-api-key"), nullptr);
  withHeader("X-Api-Key", "k1");
  EXPECT_EQ(check(limit).status, 0);
  EXPECT_EQ(check(limit).status, 429);
  // The same address with another key, or without one (then the address is the key).
  withHeader("X-Api-Key", "k2");
  EXPECT_EQ(check(limit).status, 0);
  withHeader("Other", "k1");
  EXPECT_EQ(check(limit).status, 0);
  EXPECT_EQ(check(limit).status, 429);
  // A key whose bytes are an address's is still apart from that address.
  from("1.2.3.4");
  withHeader("X-Api-Key", std::string_view("\x01\x02\x03\x04", 4));
  EXPECT_EQ(check(limit).status, 0);
  withHeader("Other", "");
  EXPECT_EQ(check(limit).status, 0);
}

TEST_F(RouteLimitTest, ConnectionsHoldASlotUntilReleased) {
  RouteLimit limit = makeRouteLimit(limitConfig(0, 1, 0, 1), nullptr);
  LimitVerdict first = check(limit);
  ASSERT_EQ(first.status, 0);
  EXPECT_NE(first.slot, 0u);
  LimitVerdict second = check(limit);
  EXPECT_EQ(second.status, 429);
  EXPECT_EQ(second.retry_after_s, 1u);
  table_->table().release(first.slot, first.key);
  EXPECT_EQ(check(limit).status, 0);
}

TEST_F(RouteLimitTest, AdoptChecksTheTable) {
  EXPECT_FALSE(SharedLimits::adopt(128 << 10, common::UniqueFd(::dup(table_->fd()))).ok());
  auto same = SharedLimits::adopt(64 << 10, common::UniqueFd(::dup(table_->fd())));
  ASSERT_TRUE(same.ok());
  RouteLimit limit = makeRouteLimit(limitConfig(1, 60, 0, 0), nullptr);
  EXPECT_EQ(check(limit).status, 0);
  // The other mapping sees the same client.
  EXPECT_EQ(checkLimit(limit, **same, request_, 100 * kSecond).status, 429);
}

}  // namespace
}  // namespace scalws::worker::limits
