#include "worker/server/instance_loops.h"

#include <csignal>

#include "ipc/uv_handle.h"

namespace scalws::worker {

InstanceLoops::InstanceLoops(uv_loop_t* main, std::shared_ptr<const ConfigSnapshot> snapshot,
                             std::vector<std::vector<ListenerSocket>> listeners_per_loop,
                             MetricsArea* metrics_area, const ProcessStats* process,
                             int access_log_fd)
    : main_(main),
      snapshot_(std::move(snapshot)),
      listeners_per_loop_(std::move(listeners_per_loop)),
      metrics_area_(metrics_area),
      process_(process),
      access_log_fd_(access_log_fd) {
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
    ipc::closeAndDelete(self->drained_async_);
    ipc::closeAndDelete(self->applied_async_);
    if (self->on_drained_) self->on_drained_();
  });
  drained_async_->data = this;
  applied_async_ = new uv_async_t;
  uv_async_init(main_, applied_async_, [](uv_async_t* async) {
    auto* self = static_cast<InstanceLoops*>(async->data);
    self->broadcasting_ = false;
    auto callbacks = std::move(self->waiting_callbacks_);
    self->waiting_callbacks_.clear();
    for (auto& cb : callbacks) cb();
    self->startBroadcast();  // snapshots posted while this one was in flight
  });
  applied_async_->data = this;
  for (size_t i = 0; i < listeners_per_loop_.size(); ++i) {
    uv_loop_t* uv = main_;
    if (i > 0) {
      thread_uvs_.push_back(std::make_unique<uv_loop_t>());
      uv = thread_uvs_.back().get();
      uv_loop_init(uv);
    }
    LoopMetricsSetup metrics;
    metrics.area = metrics_area_;
    metrics.slot = i;
    metrics.process = i == 0 ? process_ : nullptr;  // one loop reports the process
    auto loop = std::make_unique<WorkerLoop>(uv, static_cast<uint32_t>(i), snapshot_,
                                             access_log_fd_, metrics);
    for (const ListenerSocket& l : listeners_per_loop_[i]) loop->addListener(l);
    // After the WorkerLoop's own async handle, so it runs after it (see the header).
    auto barrier = std::make_unique<Barrier>();
    barrier->owner = this;
    barrier->loop = loop.get();
    uv_async_init(uv, &barrier->handle, &InstanceLoops::onBarrier);
    barrier->handle.data = barrier.get();
    Barrier* raw = barrier.get();
    barriers_.push_back(std::move(barrier));
    // On the loop's own thread: its last handle of ours closes, then the last loop to
    // drain wakes the main thread.
    loop->setOnDrained([this, raw] {
      uv_close(reinterpret_cast<uv_handle_t*>(&raw->handle), nullptr);
      if (++drained_ == loops_.size()) uv_async_send(drained_async_);
    });
    loops_.push_back(std::move(loop));
  }
  for (size_t i = 1; i < loops_.size(); ++i) {
    threads_.emplace_back([this, i] { loops_[i]->run(); });
  }
}

void InstanceLoops::broadcastSnapshot(const std::shared_ptr<const ConfigSnapshot>& snapshot,
                                      std::function<void()> on_applied) {
  if (stopping_) {
    // Loops may already have closed their wake-up handles; nothing new will be served.
    if (on_applied) on_applied();
    return;
  }
  snapshot_ = snapshot;
  if (on_applied) applied_callbacks_.push_back(std::move(on_applied));
  startBroadcast();
}

void InstanceLoops::startBroadcast() {
  if (broadcasting_ || applied_callbacks_.empty()) return;
  broadcasting_ = true;
  waiting_callbacks_ = std::move(applied_callbacks_);
  applied_callbacks_.clear();
  barrier_pending_ = loops_.size();
  for (size_t i = 0; i < loops_.size(); ++i) {
    barriers_[i]->expected = snapshot_;
    loops_[i]->postSnapshot(snapshot_);
    uv_async_send(&barriers_[i]->handle);
  }
}

void InstanceLoops::onBarrier(uv_async_t* handle) {
  auto* barrier = static_cast<Barrier*>(handle->data);
  if (barrier->loop->snapshot() != barrier->expected && !barrier->loop->shuttingDown()) {
    uv_async_send(handle);  // the loop's own wake-up is still pending: next turn
    return;
  }
  barrier->expected.reset();
  InstanceLoops* self = barrier->owner;
  if (--self->barrier_pending_ == 0) uv_async_send(self->applied_async_);
}

void InstanceLoops::broadcastSharedHosts(int listen_index,
                                         std::shared_ptr<const SharedHosts> hosts) {
  if (stopping_) return;
  for (auto& loop : loops_) loop->postSharedHosts(listen_index, hosts);
}

void InstanceLoops::shutdown() {
  if (stopping_) return;
  stopping_ = true;
  // A reload waiting for its barrier would never hear back once loops stop.
  auto callbacks = std::move(waiting_callbacks_);
  waiting_callbacks_.clear();
  for (auto& cb : applied_callbacks_) callbacks.push_back(std::move(cb));
  applied_callbacks_.clear();
  for (auto& cb : callbacks) cb();
  for (auto& loop : loops_) loop->postShutdown();
}

void InstanceLoops::join() {
  for (auto& t : threads_) t.join();
  threads_.clear();
  loops_.clear();
  for (auto& uv : thread_uvs_) uv_loop_close(uv.get());
  thread_uvs_.clear();
  barriers_.clear();
}

}  // namespace scalws::worker
