// One loop's side of one PHP pool (connections to PHP pools are kept
// per loop and reused): its idle connections, how many it has open, and the requests
// waiting for one.
//
// With keep_conn a loop never holds more than `share` connections (idle, connecting or in
// use); a request that finds none free waits in a bounded FIFO queue until one is released
// or its own queue timeout fires (the waiter arms it). Without keep_conn every request
// opens its own connection and it is closed afterwards.
//
// Loop thread only. Lives as long as the loop's LoopPools; connections it opened are
// counted until they are closed. With `counters` (the loop's) it counts pool
// connects, reuses, and queue waits with the time each spent queued.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>

#include "worker/handlers/fastcgi/pool_connection.h"
#include "worker/handlers/fastcgi/pool_spec.h"
#include "worker/metrics/loop_counters.h"

namespace scalws::worker::fastcgi {

class PoolWaiter {
 public:
  // A connection, lent to the waiter: connected, or still connecting (see its state()).
  virtual void onPoolConnection(PoolConnection& connection) noexcept = 0;
  // No connection could be opened (errno); the waiter answers 502.
  virtual void onPoolUnreachable(int err) noexcept = 0;

 protected:
  ~PoolWaiter() = default;

 private:
  friend class PoolState;
  PoolWaiter* waiter_next_ = nullptr;
  PoolWaiter* waiter_prev_ = nullptr;
  uint64_t queued_at_ns_ = 0;
  bool queued_ = false;
};

class PoolState {
 public:
  PoolState(SocketPoller& poller, const PoolSpec& spec, LoopCounters* counters = nullptr)
      : poller_(poller), spec_(spec), counters_(counters) {}
  ~PoolState();
  PoolState(const PoolState&) = delete;
  PoolState& operator=(const PoolState&) = delete;

  const PoolSpec& spec() const { return spec_; }
  // A reload with the same address: new share, timeouts, queue limit.
  void update(const PoolSpec& spec);
  // A reload moved the pool: idle connections close now, lent ones when released.
  void retire();
  bool retired() const { return retired_; }

  enum class Acquire {
    kGot,        // `out` is lent to the caller (maybe still connecting)
    kQueued,     // the waiter hears through onPoolConnection/onPoolUnreachable
    kQueueFull,  // 503
    kFailed,     // connect failed at once; `err` says why (502)
  };
  Acquire acquire(PoolWaiter& waiter, PoolConnection*& out, int& err);
  // Leaves the queue (timeout, client gone). No-op when not queued.
  void cancel(PoolWaiter& waiter);
  // Takes a lent connection back: kept for the next request when `reusable` and the pool
  // keeps connections, else closed. May hand it to a waiter before returning.
  void release(PoolConnection& connection, bool reusable);

  void closeIdle();
  void onIdleEvent(PoolConnection& connection);

  uint32_t openCount() const { return open_; }
  size_t idleCount() const { return idle_count_; }
  size_t queuedCount() const { return queued_count_; }

 private:
  PoolConnection* open(int& err);
  void close(PoolConnection& connection);
  void pushIdle(PoolConnection& connection);
  PoolConnection* popIdle();
  void unlinkIdle(PoolConnection& connection);
  PoolWaiter* popWaiter();
  bool mayOpen() const { return !spec_.keep_conn || open_ < spec_.share; }
  // After a connection closed: give the first waiters a new connection while allowed.
  void serveWaiters();

  SocketPoller& poller_;
  PoolSpec spec_;
  LoopCounters* counters_;
  bool retired_ = false;
  uint32_t open_ = 0;
  PoolConnection* idle_head_ = nullptr;  // most recently used first
  size_t idle_count_ = 0;
  PoolWaiter* wait_head_ = nullptr;
  PoolWaiter* wait_tail_ = nullptr;
  size_t queued_count_ = 0;
};

}  // namespace scalws::worker::fastcgi
