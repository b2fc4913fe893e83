#include "worker/handlers/proxy/balancer.h"

#include <bit>

namespace scalws::worker::proxy {

using common::config::BalanceMode;

Balancer::Balancer(uint64_t seed) : rng_(seed != 0 ? seed : 1) {}

uint64_t Balancer::next() {
  // xorshift64*: plenty for spreading load, and no allocation or lock.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545f4914f6cdd1dull;
}

int Balancer::pick(const UpstreamSpec& spec, uint64_t candidates, std::span<const uint32_t> active,
                   const uint64_t* key_hash) {
  if (candidates == 0) return -1;
  if (std::has_single_bit(candidates)) return std::countr_zero(candidates);
  switch (spec.balance) {
    case BalanceMode::kRoundRobin:
      return roundRobin(spec, candidates);
    case BalanceMode::kLeastConn:
      return leastConn(spec, candidates, active);
    case BalanceMode::kRandomTwo:
      return randomTwo(spec, candidates, active);
    case BalanceMode::kHash:
      if (key_hash != nullptr) {
        int found = spec.ring.find(*key_hash, [&](int i) { return (candidates >> i) & 1; });
        if (found >= 0) return found;
      }
      return roundRobin(spec, candidates);
  }
  return -1;
}

int Balancer::roundRobin(const UpstreamSpec& spec, uint64_t candidates) {
  if (current_.size() != spec.servers.size()) current_.assign(spec.servers.size(), 0);
  int64_t total = 0;
  int best = -1;
  for (uint64_t rest = candidates; rest != 0; rest &= rest - 1) {
    int i = std::countr_zero(rest);
    int64_t w = spec.servers[static_cast<size_t>(i)].weight;
    current_[static_cast<size_t>(i)] += w;
    total += w;
    if (best < 0 || current_[static_cast<size_t>(i)] > current_[static_cast<size_t>(best)]) {
      best = i;
    }
  }
  current_[static_cast<size_t>(best)] -= total;
  return best;
}

int Balancer::leastConn(const UpstreamSpec& spec, uint64_t candidates,
                        std::span<const uint32_t> active) {
  const int n = static_cast<int>(spec.servers.size());
  int best = -1;
  // Start the scan at a rotating index so equal loads take turns.
  int start = static_cast<int>(rotor_++ % static_cast<uint32_t>(n));
  for (int k = 0; k < n; ++k) {
    int i = (start + k) % n;
    if (((candidates >> i) & 1) == 0) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    // active[i] / weight[i] < active[best] / weight[best], without division.
    uint64_t lhs =
        uint64_t{active[static_cast<size_t>(i)]} * spec.servers[static_cast<size_t>(best)].weight;
    uint64_t rhs =
        uint64_t{active[static_cast<size_t>(best)]} * spec.servers[static_cast<size_t>(i)].weight;
    if (lhs < rhs) best = i;
  }
  return best;
}

int Balancer::weightedDraw(const UpstreamSpec& spec, uint64_t candidates) {
  uint64_t total = 0;
  for (uint64_t rest = candidates; rest != 0; rest &= rest - 1) {
    total += spec.servers[static_cast<size_t>(std::countr_zero(rest))].weight;
  }
  uint64_t r = next() % total;
  for (uint64_t rest = candidates; rest != 0; rest &= rest - 1) {
    int i = std::countr_zero(rest);
    uint64_t w = spec.servers[static_cast<size_t>(i)].weight;
    if (r < w) return i;
    r -= w;
  }
  return std::countr_zero(candidates);
}

int Balancer::randomTwo(const UpstreamSpec& spec, uint64_t candidates,
                        std::span<const uint32_t> active) {
  int a = weightedDraw(spec, candidates);
  int b = weightedDraw(spec, candidates & ~(uint64_t{1} << a));
  uint64_t load_a =
      uint64_t{active[static_cast<size_t>(a)]} * spec.servers[static_cast<size_t>(b)].weight;
  uint64_t load_b =
      uint64_t{active[static_cast<size_t>(b)]} * spec.servers[static_cast<size_t>(a)].weight;
  return load_b < load_a ? b : a;
}

}  // namespace scalws::worker::proxy
