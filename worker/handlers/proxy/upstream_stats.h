// What the proxy reports about its upstreams: per [upstream] name and per server, the
// health each loop of this process sees and the counters they kept, summed over the loops.
// Read by the status page and the metrics the worker sends its controller, from any thread.
//
// Each loop's UpstreamPools registers here; reading takes the registry's lock, which a
// loop takes only when it adds a pool (an upstream's first request in that loop, or a
// reload that moved its servers) — never on the request path.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/metrics/latency_buckets.h"

namespace scalws::worker::proxy {

class UpstreamPools;

struct UpstreamServerStats {
  std::string address;  // "10.0.0.7:9000", "unix:/run/api.sock"
  bool backup = false;
  uint32_t loops = 0;              // loops of this process that have sent to the upstream
  uint32_t loops_down = 0;         // of those, how many see the server down
  int64_t down_since_unix_ms = 0;  // the earliest, when down somewhere
  uint64_t failures = 0;           // counted against its health now (max over the loops)
  uint64_t active = 0;             // requests in flight
  uint64_t idle = 0;               // kept idle connections
  uint64_t requests = 0;
  uint64_t responses_5xx = 0;
  uint64_t connect_failures = 0;
  uint64_t latency_sum_us = 0;
  std::array<uint64_t, common::metrics::kLatencyBuckets> latency{};
};

struct UpstreamStats {
  std::string name;
  std::vector<UpstreamServerStats> servers;  // in config order
};

// Every upstream some loop of this process has used, its current servers only.
std::vector<UpstreamStats> collectUpstreamStats();

// For UpstreamPools: membership, and the lock that guards a registered one's pool list.
void registerLoopPools(UpstreamPools& pools);
void unregisterLoopPools(UpstreamPools& pools);
std::mutex& upstreamStatsMutex();

}  // namespace scalws::worker::proxy
