// The FastCGI state of one WorkerLoop: a PoolState per PHP pool this loop has talked to,
// the recycled per-request Exchange objects (no allocation per request in steady state)
// and a scratch buffer for encoding PARAMS.
//
// A LoopLocal of its WorkerLoop (`loop.local<LoopPools>()`); loop thread only. Pools are found
// by name: a reload that keeps a pool's address keeps its connections and only updates its
// share and timeouts; one that moves it retires the old state.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/object_pool.h"
#include "worker/handlers/fastcgi/pool_state.h"
#include "worker/loop/loop_local.h"

namespace scalws::worker {
class WorkerLoop;
}

namespace scalws::worker::fastcgi {

class Exchange;

class LoopPools final : public LoopLocal {
 public:
  explicit LoopPools(WorkerLoop& loop);
  ~LoopPools() override;
  LoopPools(const LoopPools&) = delete;
  LoopPools& operator=(const LoopPools&) = delete;

  WorkerLoop& loop() { return loop_; }
  PoolState& stateFor(const PoolSpec& spec);
  // A free Exchange; give it back with recycle() once its request ended.
  Exchange& takeExchange();
  void recycle(Exchange& exchange);
  std::string& paramsScratch() { return params_; }

  // The loop is stopping: kept connections close so the loop can end.
  void onLoopStopping() noexcept override;

  size_t exchangeCountForTest() const { return exchanges_.made(); }

 private:
  WorkerLoop& loop_;
  std::vector<std::unique_ptr<PoolState>> states_;
  common::ObjectPool<Exchange> exchanges_;
  std::string params_;
};

}  // namespace scalws::worker::fastcgi
