// The proxy's state in one WorkerLoop: an UpstreamPool per [upstream] this loop has sent
// requests to, and the recycled per-request ProxyExchange (and Tunnel) objects (no
// allocation per request in steady state).
//
// A LoopLocal of its WorkerLoop (`loop.local<UpstreamPools>()`); loop thread only.
#pragma once

#include <memory>
#include <vector>

#include "common/object_pool.h"
#include "worker/handlers/proxy/upstream_pool.h"
#include "worker/loop/loop_local.h"

namespace scalws::worker {
class WorkerLoop;
}

namespace scalws::worker::proxy {

class ProxyExchange;
class Tunnel;

class UpstreamPools final : public LoopLocal {
 public:
  explicit UpstreamPools(WorkerLoop& loop);
  ~UpstreamPools() override;
  UpstreamPools(const UpstreamPools&) = delete;
  UpstreamPools& operator=(const UpstreamPools&) = delete;

  WorkerLoop& loop() { return loop_; }
  // This loop's pool for `spec`: the same one while the spec (or one with the same servers)
  // is current; a spec with other servers retires the old pool.
  UpstreamPool& poolFor(const std::shared_ptr<const UpstreamSpec>& spec);
  ProxyExchange& takeExchange();
  void recycle(ProxyExchange& exchange);
  // The same for the tunnels upgraded requests become.
  Tunnel& takeTunnel();
  void recycleTunnel(Tunnel& tunnel);

  // Every pool, retired ones included, for reports (upstream_stats.h; other threads read it
  // under upstreamStatsMutex(), which guards additions).
  const std::vector<std::unique_ptr<UpstreamPool>>& pools() const { return pools_; }

  void onLoopStopping() noexcept override;

 private:
  WorkerLoop& loop_;
  std::vector<std::unique_ptr<UpstreamPool>> pools_;
  common::ObjectPool<ProxyExchange> exchanges_;
  common::ObjectPool<Tunnel> tunnels_;
};

}  // namespace scalws::worker::proxy
