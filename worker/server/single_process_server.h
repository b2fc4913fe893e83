// Standalone "single" mode: one process, `workers` loops on as many threads, each with its
// own SO_REUSEPORT listeners. SIGHUP reloads in place: the new snapshot is posted to every
// loop and connections move to it between requests. Listener changes need a restart in
// this mode (the process may no longer bind once sandboxed) and are refused on reload.
//
// Sandboxed, the process may no longer be able to open its config path (it runs as the
// site's user; the file may sit in a directory only root can enter). It keeps the file
// open from the start and re-reads it through that descriptor when the path cannot be
// opened: an edit in place is picked up; a file replaced by a new one (rename) cannot be
// reached from inside the sandbox and the reload says so.
//
// SIGUSR1 reopens [server] access_log and error_log from inside the sandbox: their
// directories allow writing files already there (not making them), so the new file must
// exist — logrotate's `create` (its default) makes it before the postrotate signal.
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
  common::Result<std::string> readConfig() const;

  std::vector<int> listener_fds_;
  int config_fd_ = -1;
  LoopGroup* group_ = nullptr;
};

}  // namespace scalws::worker
