#include "worker/server/instance_loops.h"

#include <csignal>

namespace scalws::worker {

InstanceLoops::InstanceLoops(uv_loop_t* main, std::shared_ptr<const ConfigSnapshot> snapshot,
                             std::vector<std::vector<ListenerSocket>> listeners_per_loop)
    : main_(main),
      snapshot_(std::move(snapshot)),
      listeners_per_loop_(std::move(listeners_per_loop)) {
  if (listeners_per_loop_.empty()) listeners_per_loop_.resize(1);
}

InstanceLoops::~InstanceLoops() {
  join();
}

void InstanceLoops::start(std::function<void()> on_drained) {
  on_drained_ = std::move(on_drained);
  std::signal(SIGPIPE, SIG_IGN);
  drained_async_ = new uv_async_t;
  uv_async_init(main_, drained_async_, [](uv_async_t* async) {
    auto* self = static_cast<InstanceLoops*>(async->data);
    uv_close(reinterpret_cast<uv_handle_t*>(async),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
    self->drained_async_ = nullptr;
    if (self->on_drained_) self->on_drained_();
  });
  drained_async_->data = this;
  for (size_t i = 0; i < listeners_per_loop_.size(); ++i) {
    uv_loop_t* uv = main_;
    if (i > 0) {
      thread_uvs_.push_back(std::make_unique<uv_loop_t>());
      uv = thread_uvs_.back().get();
      uv_loop_init(uv);
    }
    auto loop = std::make_unique<WorkerLoop>(uv, static_cast<uint32_t>(i), snapshot_, -1);
    for (const ListenerSocket& l : listeners_per_loop_[i]) loop->addListener(l);
    // Any loop's thread may get here; the last one wakes the main thread.
    loop->setOnDrained([this] {
      if (++drained_ == loops_.size()) uv_async_send(drained_async_);
    });
    loops_.push_back(std::move(loop));
  }
  for (size_t i = 1; i < loops_.size(); ++i) {
    threads_.emplace_back([this, i] { loops_[i]->run(); });
  }
}

void InstanceLoops::broadcastSnapshot(const std::shared_ptr<const ConfigSnapshot>& snapshot) {
  if (stopping_) return;  // loops may already have closed their wake-up handles
  snapshot_ = snapshot;
  for (auto& loop : loops_) loop->postSnapshot(snapshot);
}

void InstanceLoops::shutdown() {
  if (stopping_) return;
  stopping_ = true;
  for (auto& loop : loops_) loop->postShutdown();
}

void InstanceLoops::join() {
  for (auto& t : threads_) t.join();
  threads_.clear();
  loops_.clear();
  for (auto& uv : thread_uvs_) uv_loop_close(uv.get());
  thread_uvs_.clear();
}

}  // namespace scalws::worker
