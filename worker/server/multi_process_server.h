// Standalone "multi" mode: a supervising parent and `workers` child processes. The parent
// binds one SO_REUSEPORT listener per worker and address and keeps them, so a replacement
// child (after a crash or a reload) accepts from the same queue and no connection waiting
// in it is lost. HTTP/3 is the exception: a new generation gets UDP sockets of its own in
// the address's reuseport group (common/net/quic_steering.h), because a QUIC connection
// lives in one process and its packets must keep reaching it while it drains.
//
// Signals: SIGTERM/SIGINT stop every child gracefully and exit 0 once they are gone;
// SIGHUP re-reads the config — valid: a new generation of children starts on it and the
// old one drains; invalid: every error is logged and the old generation keeps serving.
// SIGUSR1 reopens [server] access_log and error_log (after logrotate renamed them) and
// starts a new generation on the running config that inherits the new files.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "worker/metrics/metrics_area.h"
#include "worker/server/site_runtime.h"

namespace scalws::worker {

class MultiProcessServer {
 public:
  MultiProcessServer(std::string config_path, SiteRuntime runtime);
  ~MultiProcessServer();
  int run();

 private:
  struct Child {
    pid_t pid = -1;
    uint32_t index = 0;
    size_t metrics_slot = 0;
    uint64_t generation = 0;
    uint64_t started_ms = 0;
  };
  struct Slot {  // per worker index of the current generation
    uint32_t crashes = 0;
    uint64_t restart_at_ms = 0;  // 0: running or not pending
  };

  common::Status openListeners(const common::config::SiteConfig& site, uint32_t workers);
  // A generation's own UDP socket per worker on every HTTP/3 address: sockets no running
  // generation reads, and new ones bound when there are too few. Planning changes nothing
  // (a dropped plan closes what it bound); applying it steers new connections there.
  struct QuicPlan {
    std::map<std::string, std::vector<uint16_t>> chosen;
    std::map<std::string, std::vector<common::UniqueFd>> bound;
  };
  common::Result<QuicPlan> planQuicSockets(const common::config::SiteConfig& site,
                                           uint32_t workers);
  void applyQuicPlan(QuicPlan plan, uint64_t generation);
  // A generation's last process is gone: its UDP sockets are free for a later one.
  void releaseQuicSockets(uint64_t generation);
  pid_t spawn(uint32_t index);
  [[noreturn]] void runChild(uint32_t index, size_t metrics_slot);
  void reapChildren();
  void reload();
  void reopenLogs();       // SIGUSR1
  void startGeneration();  // new workers on runtime_, then the old ones drain
  void stopAll();
  uint64_t nowMs() const;

  size_t takeMetricsSlot();

  std::string config_path_;
  SiteRuntime runtime_;
  // Shared with every child: each writes its own slot, the status page sums them all.
  std::unique_ptr<MetricsArea> metrics_;
  std::vector<size_t> free_metrics_slots_;
  uint32_t workers_ = 1;
  uint64_t generation_ = 1;
  // address → one listening fd per worker index
  std::map<std::string, std::vector<int>> listeners_;
  // An HTTP/3 address's UDP sockets, in their reuseport group's order: a socket's place is
  // the steering id its readers' connection IDs carry. None closes while the address is
  // served (the kernel would move the group's last socket into its place), so a generation
  // that drains keeps reading its own sockets while the next one reads others.
  struct QuicGroup {
    std::vector<int> fds;
    std::vector<uint64_t> generation;  // reading each socket; 0: none
    std::vector<uint16_t> current;     // worker index → socket, for the current generation
  };
  std::map<std::string, QuicGroup> quic_groups_;
  std::vector<Child> children_;
  std::vector<Slot> slots_;
  int signal_fd_ = -1;
  bool stopping_ = false;
};

}  // namespace scalws::worker
