// Balancing: each mode's distribution, the consistent ring, and candidates left out.
#include "worker/handlers/proxy/balancer.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace scalws::worker::proxy {
namespace {

using common::config::BalanceMode;

UpstreamSpec specOf(BalanceMode mode, std::vector<uint32_t> weights,
                    std::vector<bool> backup = {}) {
  UpstreamSpec s;
  s.balance = mode;
  std::vector<HashRing::Member> members;
  for (size_t i = 0; i < weights.size(); ++i) {
    ServerSpec server;
    server.text = "10.0.0." + std::to_string(i + 1) + ":80";
    server.weight = weights[i];
    server.backup = i < backup.size() && backup[i];
    s.servers.push_back(server);
  }
  for (const ServerSpec& server : s.servers) {
    members.push_back(HashRing::Member{server.text, server.backup ? 0u : server.weight});
  }
  s.ring = HashRing(members);
  return s;
}

uint64_t all(size_t n) {
  return n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
}

TEST(Balancer, SmoothWeightedRoundRobin) {
  UpstreamSpec spec = specOf(BalanceMode::kRoundRobin, {5, 1, 1});
  Balancer b;
  std::vector<uint32_t> active(3, 0);
  std::string order;
  for (int i = 0; i < 7; ++i)
    order += static_cast<char>('a' + b.pick(spec, all(3), active, nullptr));
  // nginx's interleaving: the heavy server never runs in a block of five.
  EXPECT_EQ(order, "aabacaa");
  std::map<int, int> counts;
  for (int i = 0; i < 700; ++i) ++counts[b.pick(spec, all(3), active, nullptr)];
  EXPECT_EQ(counts[0], 500);
  EXPECT_EQ(counts[1], 100);
  EXPECT_EQ(counts[2], 100);
}

TEST(Balancer, OnlyCandidatesAreChosen) {
  UpstreamSpec spec = specOf(BalanceMode::kRoundRobin, {1, 1, 1});
  Balancer b;
  std::vector<uint32_t> active(3, 0);
  for (int i = 0; i < 10; ++i) EXPECT_NE(b.pick(spec, 0b101, active, nullptr), 1);
  EXPECT_EQ(b.pick(spec, 0b010, active, nullptr), 1);
  EXPECT_EQ(b.pick(spec, 0, active, nullptr), -1);
}

TEST(Balancer, LeastConnTakesTheLeastLoadedByWeight) {
  UpstreamSpec spec = specOf(BalanceMode::kLeastConn, {1, 1, 2});
  Balancer b;
  std::vector<uint32_t> active = {3, 1, 4};
  EXPECT_EQ(b.pick(spec, all(3), active, nullptr), 1);  // 1/1 < 4/2 < 3/1
  active = {2, 2, 2};
  EXPECT_EQ(b.pick(spec, all(3), active, nullptr), 2);  // 2/2 beats 2/1
  // Equal loads take turns.
  spec = specOf(BalanceMode::kLeastConn, {1, 1, 1});
  active = {0, 0, 0};
  std::map<int, int> counts;
  for (int i = 0; i < 30; ++i) ++counts[b.pick(spec, all(3), active, nullptr)];
  EXPECT_EQ(counts[0], 10);
  EXPECT_EQ(counts[1], 10);
  EXPECT_EQ(counts[2], 10);
}

TEST(Balancer, RandomTwoPrefersTheLessLoaded) {
  UpstreamSpec spec = specOf(BalanceMode::kRandomTwo, {1, 1});
  Balancer b(42);
  std::vector<uint32_t> active = {10, 0};
  for (int i = 0; i < 50; ++i) EXPECT_EQ(b.pick(spec, all(2), active, nullptr), 1);
  // Unloaded, it spreads.
  spec = specOf(BalanceMode::kRandomTwo, {1, 1, 1, 1});
  active.assign(4, 0);
  std::map<int, int> counts;
  for (int i = 0; i < 4000; ++i) ++counts[b.pick(spec, all(4), active, nullptr)];
  for (int s = 0; s < 4; ++s) EXPECT_GT(counts[s], 700) << s;
}

TEST(Balancer, HashIsStableAndConsistent) {
  UpstreamSpec spec = specOf(BalanceMode::kHash, {1, 1, 1, 1});
  Balancer b;
  std::vector<uint32_t> active(4, 0);
  std::map<std::string, int> owner;
  std::map<int, int> counts;
  for (int k = 0; k < 2000; ++k) {
    std::string key = "user-" + std::to_string(k);
    uint64_t h = hashKey(key);
    int s = b.pick(spec, all(4), active, &h);
    owner[key] = s;
    ++counts[s];
    EXPECT_EQ(b.pick(spec, all(4), active, &h), s);  // the same key, the same server
  }
  for (int s = 0; s < 4; ++s) EXPECT_GT(counts[s], 300) << s;  // spread over the ring
  // Server 2 goes down: only its keys move, the others stay put.
  int moved = 0;
  for (const auto& [key, s] : owner) {
    uint64_t h = hashKey(key);
    int now = b.pick(spec, all(4) & ~uint64_t{0b100}, active, &h);
    if (s == 2) {
      EXPECT_NE(now, 2);
      ++moved;
    } else {
      EXPECT_EQ(now, s) << key;
    }
  }
  EXPECT_EQ(moved, counts[2]);
}

TEST(Balancer, HashFallsBackToBackupsInTurn) {
  UpstreamSpec spec = specOf(BalanceMode::kHash, {1, 1, 1}, {false, true, true});
  Balancer b;
  std::vector<uint32_t> active(3, 0);
  uint64_t h = hashKey("k");
  EXPECT_EQ(b.pick(spec, all(3), active, &h), 0);  // backups own no point on the ring
  std::map<int, int> counts;
  for (int i = 0; i < 10; ++i) ++counts[b.pick(spec, 0b110, active, &h)];
  EXPECT_EQ(counts[1], 5);
  EXPECT_EQ(counts[2], 5);
}

TEST(HashKey, IsStable) {
  // Every worker process of a site must send a key to the same server.
  EXPECT_EQ(hashKey("203.0.113.7"), hashKey("203.0.113.7"));
  EXPECT_NE(hashKey("a"), hashKey("b"));
}

}  // namespace
}  // namespace scalws::worker::proxy
