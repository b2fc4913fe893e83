// Standalone "single" mode: one process, `workers` loops on as many threads, each with its
// own SO_REUSEPORT listeners. SIGHUP reloads in place: the new snapshot is posted to every
// loop and connections move to it between requests. Listener changes need a restart in
// this mode (the process may no longer bind once sandboxed) and are refused on reload.
#pragma once

#include <string>
#include <vector>

#include "worker/server/site_runtime.h"

namespace scalws::worker {

class LoopGroup;

class SingleProcessServer {
 public:
  SingleProcessServer(std::string config_path, SiteRuntime runtime);
  ~SingleProcessServer();
  int run();

 private:
  void reload();

  std::string config_path_;
  SiteRuntime runtime_;
  std::vector<int> listener_fds_;
  LoopGroup* group_ = nullptr;
};

}  // namespace scalws::worker
