// What the proxy reports about its upstreams: per [upstream] name and per server, the
// health each loop of this process sees and the counters they kept, summed over the loops.
// Read by the status page and the metrics the worker sends its controller, from any thread.
//
// Each loop's UpstreamPools registers here; reading takes the registry's lock, which a
// loop takes only when it adds a pool (an upstream's first request in that loop, or a
// reload that moved its servers) — never on the request path.
#pragma once

#include <mutex>
#include <vector>

#include "common/metrics/upstream_metrics.h"

namespace scalws::worker::proxy {

class UpstreamPools;

using UpstreamServerStats = common::metrics::UpstreamServerMetrics;
using UpstreamStats = common::metrics::UpstreamMetrics;

// Every upstream some loop of this process has used, its current servers only.
std::vector<UpstreamStats> collectUpstreamStats();

// For UpstreamPools: membership, and the lock that guards a registered one's pool list.
void registerLoopPools(UpstreamPools& pools);
void unregisterLoopPools(UpstreamPools& pools);
std::mutex& upstreamStatsMutex();

}  // namespace scalws::worker::proxy
