#include "worker/handlers/proxy/upstream_pools.h"

#include "worker/handlers/proxy/proxy_exchange.h"
#include "worker/handlers/proxy/tunnel.h"
#include "worker/handlers/proxy/upstream_stats.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::proxy {

UpstreamPools::UpstreamPools(WorkerLoop& loop) : loop_(loop) {
  registerLoopPools(*this);
}

UpstreamPools::~UpstreamPools() {
  unregisterLoopPools(*this);
}

UpstreamPool& UpstreamPools::poolFor(const std::shared_ptr<const UpstreamSpec>& spec) {
  for (auto& p : pools_) {
    if (p->specPointer() == spec.get()) return *p;  // the common case: the same snapshot
  }
  // A new snapshot: other threads may be reading the pools (upstream_stats.h).
  std::lock_guard<std::mutex> lock(upstreamStatsMutex());
  for (auto& p : pools_) {
    if (p->retired() || p->spec().name != spec->name) continue;
    if (p->spec().sameServers(*spec)) {
      p->update(spec);
      return *p;
    }
    p->retire();
  }
  pools_.push_back(std::make_unique<UpstreamPool>(loop_, spec));
  return *pools_.back();
}

ProxyExchange& UpstreamPools::takeExchange() {
  return exchanges_.take(*this);
}

void UpstreamPools::recycle(ProxyExchange& exchange) {
  exchanges_.give(exchange);
}

Tunnel& UpstreamPools::takeTunnel() {
  return tunnels_.take(*this);
}

void UpstreamPools::recycleTunnel(Tunnel& tunnel) {
  tunnels_.give(tunnel);
}

void UpstreamPools::onLoopStopping() noexcept {
  for (auto& p : pools_) p->stop();
}

}  // namespace scalws::worker::proxy
