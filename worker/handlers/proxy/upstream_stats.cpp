#include "worker/handlers/proxy/upstream_stats.h"

#include <algorithm>

#include "worker/handlers/proxy/upstream_pools.h"

namespace scalws::worker::proxy {
namespace {

std::vector<UpstreamPools*>& registry() {
  static std::vector<UpstreamPools*> loops;
  return loops;
}

void addServer(const ServerSpec& spec, const ServerCounters& c, UpstreamServerStats& out) {
  out.address = spec.text;
  out.backup = spec.backup;
  ++out.loops;
  if (c.down.load(std::memory_order_relaxed)) {
    ++out.loops_down;
    int64_t since = c.down_since_unix_ms.load(std::memory_order_relaxed);
    if (out.down_since_unix_ms == 0 || since < out.down_since_unix_ms)
      out.down_since_unix_ms = since;
  }
  out.failures =
      std::max<uint64_t>(out.failures, c.health_failures.load(std::memory_order_relaxed));
  out.active += c.active.value();
  out.idle += c.idle.value();
  out.requests += c.requests.value();
  out.responses_5xx += c.responses_5xx.value();
  out.connect_failures += c.connect_failures.value();
  out.latency_sum_us += c.latency_sum_us.value();
  for (size_t i = 0; i < out.latency.size(); ++i) out.latency[i] += c.latency[i].value();
}

}  // namespace

std::mutex& upstreamStatsMutex() {
  static std::mutex mutex;
  return mutex;
}

void registerLoopPools(UpstreamPools& pools) {
  std::lock_guard<std::mutex> lock(upstreamStatsMutex());
  registry().push_back(&pools);
}

void unregisterLoopPools(UpstreamPools& pools) {
  std::lock_guard<std::mutex> lock(upstreamStatsMutex());
  auto& r = registry();
  r.erase(std::remove(r.begin(), r.end(), &pools), r.end());
}

std::vector<UpstreamStats> collectUpstreamStats() {
  std::vector<UpstreamStats> out;
  std::lock_guard<std::mutex> lock(upstreamStatsMutex());
  for (UpstreamPools* loop : registry()) {
    for (const auto& pool : loop->pools()) {
      if (pool->retired()) continue;
      const UpstreamSpec& spec = pool->spec();
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const UpstreamStats& u) { return u.name == spec.name; });
      if (it == out.end()) {
        out.push_back(
            UpstreamStats{spec.name, std::vector<UpstreamServerStats>(spec.servers.size())});
        it = out.end() - 1;
      }
      // Loops on different snapshots may disagree for a moment during a reload: the one
      // seen first sets the shape, others with another count are left out.
      if (it->servers.size() != spec.servers.size()) continue;
      for (size_t i = 0; i < spec.servers.size(); ++i) {
        addServer(spec.servers[i], pool->slot(i).counters, it->servers[i]);
      }
    }
  }
  return out;
}

}  // namespace scalws::worker::proxy
