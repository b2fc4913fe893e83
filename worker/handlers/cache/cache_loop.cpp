#include "worker/handlers/cache/cache_loop.h"

#include "ipc/uv_handle.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::cache {

void PinLease::onLastRelease() noexcept {
  if (store_ != nullptr) store_->unpin(pin_);
  store_ = nullptr;
  retain();  // back to one reference for the next holder
  home_.free_leases_.push_back(this);
}

void LoopMailbox::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (async_ == nullptr) return;
  pending_.push_back(std::move(fn));
  uv_async_send(async_);
}

CacheLoop::CacheLoop(WorkerLoop& loop) : mailbox_(std::make_shared<LoopMailbox>()) {
  async_ = new uv_async_t;
  uv_async_init(loop.uv(), async_, &CacheLoop::onAsync);
  async_->data = this;
  mailbox_->async_ = async_;
}

CacheLoop::~CacheLoop() {
  onLoopStopping();
}

void CacheLoop::onLoopStopping() noexcept {
  if (async_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mailbox_->mutex_);
    mailbox_->async_ = nullptr;
    mailbox_->pending_.clear();
  }
  ipc::closeAndDelete(async_);
  async_ = nullptr;
}

void CacheLoop::onAsync(uv_async_t* async) {
  auto* self = static_cast<CacheLoop*>(async->data);
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard<std::mutex> lock(self->mailbox_->mutex_);
    ready.swap(self->mailbox_->pending_);
  }
  for (auto& fn : ready) fn();
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
