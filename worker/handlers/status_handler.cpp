#include "worker/handlers/status_handler.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/metrics/latency_buckets.h"
#include "worker/handlers/proxy/upstream_stats.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {

void StatusHandler::handle(Request& request, ResponseWriter& writer) noexcept {
  common::metrics::MetricsSnapshot s = request.loop->siteMetrics();
  nlohmann::json j = common::metrics::toJson(s);
  j["pid"] = static_cast<int64_t>(getpid());
  j["requests"] = s.requests();
  j["latency_us"] = {
      {"p50", common::metrics::latencyPercentileUs(s.latency, 0.50)},
      {"p90", common::metrics::latencyPercentileUs(s.latency, 0.90)},
      {"p99", common::metrics::latencyPercentileUs(s.latency, 0.99)},
  };
  // The proxy's servers as this process's loops see them (health is per loop; under the
  // controller `scalwsctl instance show` sums every process).
  j["upstreams"] = common::metrics::toJson(proxy::collectUpstreamStats());
  std::string body = j.dump();
  body.push_back('\n');
  static const HeaderField kHeaders[] = {{"Content-Type", "application/json"},
                                         {"Cache-Control", "no-store"}};
  writer.respond(200, kHeaders, body, BodyLifetime::kCopy);
}

}  // namespace scalws::worker
