#include "worker/handlers/fastcgi/pool_state.h"

#include <cstring>

#include "common/log.h"

namespace scalws::worker::fastcgi {

// Kept connections are closed by LoopPools::onLoopStopping() while the loop still runs; by the
// time a PoolState is destroyed the uv loop may be gone, so nothing is touched here.
PoolState::~PoolState() = default;

void PoolState::update(const PoolSpec& spec) {
  spec_ = spec;
  // Fewer connections allowed now: idle ones beyond the share go first.
  while (spec_.keep_conn && open_ > spec_.share && idle_head_ != nullptr) close(*popIdle());
  serveWaiters();
}

void PoolState::retire() {
  retired_ = true;
  closeIdle();
}

PoolConnection* PoolState::open(int& err) {
  PoolConnection* c = PoolConnection::open(poller_, *this, err);
  if (c == nullptr) {
    LOG_ERROR("php_pool.%s: connect to %s: %s", spec_.name.c_str(), spec_.address_text.c_str(),
              strerror(err));
    return nullptr;
  }
  if (counters_ != nullptr) counters_->php_connects.add();
  ++open_;
  return c;
}

void PoolState::close(PoolConnection& c) {
  --open_;
  c.close();
}

PoolState::Acquire PoolState::acquire(PoolWaiter& waiter, PoolConnection*& out, int& err) {
  if (PoolConnection* idle = popIdle()) {
    if (counters_ != nullptr) counters_->php_reuses.add();
    out = idle;
    return Acquire::kGot;
  }
  if (mayOpen()) {
    out = open(err);
    return out != nullptr ? Acquire::kGot : Acquire::kFailed;
  }
  if (queued_count_ >= spec_.queue_limit) return Acquire::kQueueFull;
  waiter.queued_ = true;
  waiter.queued_at_ns_ = uv_hrtime();
  if (counters_ != nullptr) counters_->php_waits.add();
  waiter.waiter_next_ = nullptr;
  waiter.waiter_prev_ = wait_tail_;
  if (wait_tail_ != nullptr) {
    wait_tail_->waiter_next_ = &waiter;
  } else {
    wait_head_ = &waiter;
  }
  wait_tail_ = &waiter;
  ++queued_count_;
  return Acquire::kQueued;
}

void PoolState::cancel(PoolWaiter& w) {
  if (!w.queued_) return;
  if (w.waiter_prev_ != nullptr) {
    w.waiter_prev_->waiter_next_ = w.waiter_next_;
  } else {
    wait_head_ = w.waiter_next_;
  }
  if (w.waiter_next_ != nullptr) {
    w.waiter_next_->waiter_prev_ = w.waiter_prev_;
  } else {
    wait_tail_ = w.waiter_prev_;
  }
  w.waiter_next_ = w.waiter_prev_ = nullptr;
  w.queued_ = false;
  --queued_count_;
  // Served, timed out or gone: the wait is over either way.
  if (counters_ != nullptr) counters_->php_wait_us.add((uv_hrtime() - w.queued_at_ns_) / 1000);
}

PoolWaiter* PoolState::popWaiter() {
  PoolWaiter* w = wait_head_;
  if (w != nullptr) cancel(*w);
  return w;
}

void PoolState::release(PoolConnection& c, bool reusable) {
  c.countServed();
  bool keep = reusable && spec_.keep_conn && !retired_ && open_ <= spec_.share;
  if (!keep) {
    close(c);
    serveWaiters();
    return;
  }
  if (PoolWaiter* w = popWaiter()) {
    if (counters_ != nullptr) counters_->php_reuses.add();
    w->onPoolConnection(c);
    return;
  }
  c.makeIdle();
  pushIdle(c);
}

void PoolState::serveWaiters() {
  while (wait_head_ != nullptr && mayOpen()) {
    PoolWaiter* w = popWaiter();
    int err = 0;
    PoolConnection* c = open(err);
    if (c == nullptr) {
      w->onPoolUnreachable(err);
      continue;
    }
    w->onPoolConnection(*c);
  }
}

void PoolState::closeIdle() {
  while (PoolConnection* c = popIdle()) close(*c);
}

void PoolState::onIdleEvent(PoolConnection& c) {
  // PHP-FPM closed a kept connection (pm.max_requests, a restart) or sent bytes nobody
  // asked for: either way it is not reusable.
  unlinkIdle(c);
  close(c);
  serveWaiters();
}

void PoolState::pushIdle(PoolConnection& c) {
  c.idle_prev = nullptr;
  c.idle_next = idle_head_;
  if (idle_head_ != nullptr) idle_head_->idle_prev = &c;
  idle_head_ = &c;
  ++idle_count_;
}

void PoolState::unlinkIdle(PoolConnection& c) {
  if (c.idle_prev != nullptr) {
    c.idle_prev->idle_next = c.idle_next;
  } else {
    idle_head_ = c.idle_next;
  }
  if (c.idle_next != nullptr) c.idle_next->idle_prev = c.idle_prev;
  c.idle_next = c.idle_prev = nullptr;
  --idle_count_;
}

PoolConnection* PoolState::popIdle() {
  PoolConnection* c = idle_head_;
  if (c != nullptr) unlinkIdle(*c);
  return c;
}

}  // namespace scalws::worker::fastcgi
