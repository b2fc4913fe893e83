#include "worker/handlers/fastcgi/loop_pools.h"

#include "worker/handlers/fastcgi/exchange.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::fastcgi {

LoopPools::LoopPools(WorkerLoop& loop) : loop_(loop) {}

LoopPools::~LoopPools() = default;

PoolState& LoopPools::stateFor(const PoolSpec& spec) {
  for (auto& s : states_) {
    if (s->retired() || s->spec().name != spec.name) continue;
    if (s->spec().sameAddress(spec)) {
      // The snapshot's spec may be a newer version of the same pool.
      if (s->spec().share != spec.share || s->spec().timeout_ms != spec.timeout_ms ||
          s->spec().queue_timeout_ms != spec.queue_timeout_ms ||
          s->spec().queue_limit != spec.queue_limit || s->spec().keep_conn != spec.keep_conn) {
        s->update(spec);
      }
      return *s;
    }
    s->retire();
  }
  states_.push_back(std::make_unique<PoolState>(loop_.poller(), spec, &loop_.counters()));
  return *states_.back();
}

Exchange& LoopPools::takeExchange() {
  return exchanges_.take(*this);
}

void LoopPools::recycle(Exchange& exchange) {
  exchanges_.give(exchange);
}

void LoopPools::onLoopStopping() noexcept {
  for (auto& s : states_) s->closeIdle();
}

}  // namespace scalws::worker::fastcgi
