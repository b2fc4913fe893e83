// The serving part of a worker process: one WorkerLoop on the calling thread plus one per
// extra thread ("single" mode), each with its own SO_REUSEPORT listeners. The calling
// thread also watches SIGTERM/SIGINT (graceful stop) and, when asked, SIGHUP (reload).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "worker/config_snapshot.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {

struct LoopGroupOptions {
  std::vector<std::vector<ListenerSocket>> listeners_per_loop;  // one entry per loop
  // Loop i's thread pinned to loop_cpus[i % size] (empty: none). Only outside the sandbox,
  // which refuses sched_setaffinity; inside it a process is bound before it enters the
  // sandbox and its threads inherit that (cpu_binding.h).
  std::vector<uint32_t> loop_cpus;
  int access_log_fd = -1;
  // Loop i counts into slot metrics_first_slot + i of this area (null: private counters).
  MetricsArea* metrics_area = nullptr;
  size_t metrics_first_slot = 0;
  // Called on the main thread on SIGHUP; absent: SIGHUP is ignored (a parent reloads).
  std::function<void()> on_reload;
  // Called on the main thread on SIGUSR1; absent: SIGUSR1 is ignored (a parent reopens).
  std::function<void()> on_reopen_logs;
};

class LoopGroup {
 public:
  LoopGroup(std::shared_ptr<const ConfigSnapshot> snapshot, LoopGroupOptions options);
  ~LoopGroup();
  LoopGroup(const LoopGroup&) = delete;
  LoopGroup& operator=(const LoopGroup&) = delete;

  // Serves until a graceful stop completed on every loop. Returns the exit code.
  int run();
  void broadcastSnapshot(const std::shared_ptr<const ConfigSnapshot>& snapshot);
  void shutdown();

 private:
  static void onSignal(uv_signal_t* handle, int signum);
  void onLoopDrained();

  std::shared_ptr<const ConfigSnapshot> snapshot_;
  LoopGroupOptions options_;
  uv_loop_t main_uv_{};
  std::vector<std::unique_ptr<uv_loop_t>> thread_uvs_;
  std::vector<std::unique_ptr<WorkerLoop>> loops_;
  ProcessStats process_stats_;  // opened with the group, before the sandbox hides /proc
  uv_signal_t sigterm_{};
  uv_signal_t sigint_{};
  uv_signal_t sighup_{};
  uv_signal_t sigusr1_{};
  uv_async_t drained_async_{};
  std::atomic<size_t> drained_{0};
  bool stopping_ = false;
};

}  // namespace scalws::worker
