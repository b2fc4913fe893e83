// InstanceLoops: the event loops of an instance worker. Unlike LoopGroup (standalone), loop
// 0 runs on the caller's uv loop, next to the controller channel and the signal handlers,
// so one thread serves clients and talks to the controller; loops 1..N-1 get a thread and
// a uv loop each. CPU placement is the controller's (the process affinity it set before
// exec): once sandboxed, the worker may not change its own affinity.
//
// Metrics: loop i counts into slot i of `metrics_area` (a private area of this
// process, summed by the metrics sender and the status page); loop 0 also refreshes the
// process's CPU/RSS from `process`. Both may be null (loops then count privately).
//
// Threading: construct, start, broadcastSnapshot, shutdown and join on the main thread.
// `on_drained` fires on the main thread once every loop finished its graceful stop; the
// caller then closes its own handles on the main uv loop, and join() after uv_run returns.
#pragma once

#include <uv.h>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "worker/config_snapshot.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {

class InstanceLoops {
 public:
  // listeners_per_loop.size() loops (at least 1); the fds stay owned by the caller, as does
  // `access_log_fd` (-1: no access log), which every loop writes its own buffer to.
  InstanceLoops(uv_loop_t* main, std::shared_ptr<const ConfigSnapshot> snapshot,
                std::vector<std::vector<ListenerSocket>> listeners_per_loop,
                MetricsArea* metrics_area = nullptr, const ProcessStats* process = nullptr,
                int access_log_fd = -1);
  ~InstanceLoops();
  InstanceLoops(const InstanceLoops&) = delete;
  InstanceLoops& operator=(const InstanceLoops&) = delete;

  // Creates the loops and starts the threads. Call once, after the sandbox is in force.
  void start(std::function<void()> on_drained);
  // Posts `snapshot` to every loop; `on_applied` fires on the main thread once every loop
  // took it (new connections and requests then start on it).
  void broadcastSnapshot(const std::shared_ptr<const ConfigSnapshot>& snapshot,
                         std::function<void()> on_applied);
  // Posts new names for the channels of listens[listen_index] to every loop.
  void broadcastSharedHosts(int listen_index, std::shared_ptr<const SharedHosts> hosts);
  void shutdown();  // graceful, idempotent
  void join();      // waits for the loop threads and closes their uv loops

  size_t size() const { return listeners_per_loop_.size(); }

 private:
  uv_loop_t* main_;
  std::shared_ptr<const ConfigSnapshot> snapshot_;
  std::vector<std::vector<ListenerSocket>> listeners_per_loop_;
  MetricsArea* metrics_area_;
  const ProcessStats* process_;
  int access_log_fd_;
  std::vector<std::unique_ptr<uv_loop_t>> thread_uvs_;
  std::vector<std::unique_ptr<WorkerLoop>> loops_;
  std::vector<std::thread> threads_;
  // Reload barrier: after posting a snapshot to a loop, its `barrier` handle is woken too;
  // on the loop's thread it checks that the loop now holds that snapshot (else it waits
  // one more turn: libuv may see the barrier before the loop's own wake-up handle), and the
  // last loop to confirm wakes `applied_async_` on the main thread.
  struct Barrier {
    InstanceLoops* owner = nullptr;
    WorkerLoop* loop = nullptr;
    std::shared_ptr<const ConfigSnapshot> expected;  // written before the wake-up
    uv_async_t handle{};
  };
  static void onBarrier(uv_async_t* handle);
  void startBroadcast();
  std::vector<std::unique_ptr<Barrier>> barriers_;  // one per loop, closed when it drains
  uv_async_t* applied_async_ = nullptr;
  std::atomic<size_t> barrier_pending_{0};
  std::vector<std::function<void()>> applied_callbacks_;  // main thread only
  std::vector<std::function<void()>> waiting_callbacks_;  // for the broadcast in flight
  bool broadcasting_ = false;

  uv_async_t* drained_async_ = nullptr;  // freed by its close callback
  std::atomic<size_t> drained_{0};
  std::function<void()> on_drained_;
  bool stopping_ = false;
};

}  // namespace scalws::worker
