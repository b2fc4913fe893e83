#include "worker/handlers/cache/cache_loop.h"

#include <utility>

#include "ipc/uv_handle.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::cache {

void PinLease::onLastRelease() noexcept {
  if (store_ != nullptr) store_->unpin(pin_);
  store_ = nullptr;
  retain();  // back to one reference for the next holder
  home_.free_leases_.push_back(this);
}

std::shared_ptr<LoopMailbox> LoopMailbox::open(uv_loop_t* loop) {
  auto mailbox = std::make_shared<LoopMailbox>();
  mailbox->async_ = new uv_async_t;
  uv_async_init(loop, mailbox->async_, &LoopMailbox::onAsync);
  mailbox->async_->data = mailbox.get();  // close() runs before the mailbox can go
  return mailbox;
}

void LoopMailbox::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (async_ == nullptr) return;
  pending_.push_back(std::move(fn));
  uv_async_send(async_);
}

void LoopMailbox::close() {
  uv_async_t* async = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    async = std::exchange(async_, nullptr);
    pending_.clear();
  }
  if (async != nullptr) ipc::closeAndDelete(async);
}

void LoopMailbox::onAsync(uv_async_t* async) {
  auto* self = static_cast<LoopMailbox*>(async->data);
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    ready.swap(self->pending_);
  }
  for (auto& fn : ready) fn();
}

CacheLoop::CacheLoop(WorkerLoop& loop) : mailbox_(LoopMailbox::open(loop.uv())) {}

CacheLoop::~CacheLoop() {
  onLoopStopping();
}

void CacheLoop::onLoopStopping() noexcept {
  mailbox_->close();
}

PinLease* CacheLoop::lease(MemoryStore& store, const MemoryStore::Pin& pin) {
  if (free_leases_.empty()) {
    leases_.push_back(std::make_unique<PinLease>(*this));
    free_leases_.push_back(leases_.back().get());
  }
  PinLease* l = free_leases_.back();
  free_leases_.pop_back();
  l->hold(store, pin);
  return l;
}

bool CacheLoop::sweepDue(int64_t now_ms) {
  if (now_ms - last_sweep_ms_ < 1000) return false;
  last_sweep_ms_ = now_ms;
  return true;
}

}  // namespace scalws::worker::cache
