#include "worker/server/loop_group.h"

#include <csignal>
#include <thread>

#include "common/log.h"
#include "worker/server/cpu_binding.h"

namespace scalws::worker {
namespace {

void pinCallingThread(uint32_t cpu) {
  common::Status pinned = bindCallingThread({&cpu, 1});
  if (!pinned.ok()) LOG_WARN("loop thread: %s", pinned.message().c_str());
}

}  // namespace

LoopGroup::LoopGroup(std::shared_ptr<const ConfigSnapshot> snapshot, LoopGroupOptions options)
    : snapshot_(std::move(snapshot)), options_(std::move(options)) {}

LoopGroup::~LoopGroup() = default;

void LoopGroup::onSignal(uv_signal_t* handle, int signum) {
  auto* self = static_cast<LoopGroup*>(handle->data);
  if (signum == SIGHUP) {
    if (self->options_.on_reload) self->options_.on_reload();
    return;
  }
  if (signum == SIGUSR1) {
    if (self->options_.on_reopen_logs) self->options_.on_reopen_logs();
    return;
  }
  LOG_INFO("signal %d: stopping gracefully", signum);
  self->shutdown();
}

void LoopGroup::shutdown() {
  stopping_ = true;
  for (auto& loop : loops_) loop->postShutdown();
}

void LoopGroup::broadcastSnapshot(const std::shared_ptr<const ConfigSnapshot>& snapshot) {
  if (stopping_) return;  // loops may already have closed their wake-up handles
  snapshot_ = snapshot;
  for (auto& loop : loops_) loop->postSnapshot(snapshot);
}

void LoopGroup::onLoopDrained() {
  // Any loop's thread may get here; the main thread closes its own handles.
  if (++drained_ == loops_.size()) uv_async_send(&drained_async_);
}

int LoopGroup::run() {
  size_t count = options_.listeners_per_loop.size();
  if (count == 0) count = 1;
  uv_loop_init(&main_uv_);
  for (size_t i = 0; i < count; ++i) {
    uv_loop_t* uv = &main_uv_;
    if (i > 0) {
      thread_uvs_.push_back(std::make_unique<uv_loop_t>());
      uv = thread_uvs_.back().get();
      uv_loop_init(uv);
    }
    LoopMetricsSetup metrics;
    metrics.area = options_.metrics_area;
    metrics.slot = options_.metrics_first_slot + i;
    metrics.process = i == 0 ? &process_stats_ : nullptr;  // one loop reports the process
    auto loop = std::make_unique<WorkerLoop>(uv, static_cast<uint32_t>(i), snapshot_,
                                             options_.access_log_fd, metrics);
    if (i < options_.listeners_per_loop.size()) {
      for (const ListenerSocket& l : options_.listeners_per_loop[i]) loop->addListener(l);
    }
    loop->setOnDrained([this] { onLoopDrained(); });
    loops_.push_back(std::move(loop));
  }

  uv_async_init(&main_uv_, &drained_async_, [](uv_async_t* async) {
    auto* self = static_cast<LoopGroup*>(async->data);
    uv_close(reinterpret_cast<uv_handle_t*>(&self->sigterm_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&self->sigint_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&self->sighup_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&self->sigusr1_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(async), nullptr);
  });
  drained_async_.data = this;
  for (uv_signal_t* s : {&sigterm_, &sigint_, &sighup_, &sigusr1_}) {
    uv_signal_init(&main_uv_, s);
    s->data = this;
  }
  uv_signal_start(&sigterm_, &LoopGroup::onSignal, SIGTERM);
  uv_signal_start(&sigint_, &LoopGroup::onSignal, SIGINT);
  uv_signal_start(&sighup_, &LoopGroup::onSignal, SIGHUP);
  uv_signal_start(&sigusr1_, &LoopGroup::onSignal, SIGUSR1);
  std::signal(SIGPIPE, SIG_IGN);

  std::vector<std::thread> threads;
  for (size_t i = 1; i < loops_.size(); ++i) {
    threads.emplace_back([this, i] {
      if (!options_.loop_cpus.empty()) {
        pinCallingThread(options_.loop_cpus[i % options_.loop_cpus.size()]);
      }
      loops_[i]->run();
    });
  }
  if (!options_.loop_cpus.empty()) pinCallingThread(options_.loop_cpus[0]);
  loops_[0]->run();
  for (auto& t : threads) t.join();

  loops_.clear();
  uv_loop_close(&main_uv_);
  for (auto& uv : thread_uvs_) uv_loop_close(uv.get());
  return 0;
}

}  // namespace scalws::worker
