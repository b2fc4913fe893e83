// AppManager: the apps the controller runs, each a set of AppProcesses (app_process.h).
//
// Files: STATE_DIR/apps/NAME/ holds app.log (stdout and stderr of every process, copied to
// app.log.1 and truncated past kAppLogMax; the processes append, so they write on at the
// new end) and the pid files. The sockets live in <app dir>/NAME/ (--app-dir, default
// /run/scalws/apps), a directory owned by the app's user with mode 02750 and the group of
// the instance it is assigned to (its own user's group while unassigned): only that
// instance's workers can reach its sockets (which inherit the group, mode 0770). <app dir>/NAME/tmp
// (0700) is its TMPDIR.
//
// The sandbox of each process (ExecSandbox): Landlock read-execute on /usr (and /lib*, links
// into it on Debian), read-only on /etc, /proc and --dir; read-write on --writable and its
// TMPDIR; unix sockets made only in its socket directory; /dev/null, /dev/zero,
// /dev/urandom; TCP connect only to the --connect ports, no TCP bind; the seccomp
// deny-list. The controller runs as root, so the user is switched in the child.
//
// Lifecycle as for PHP pools (pool_manager.h): startAll adopts or starts every app of the
// DB at controller start; stopAll on a stop; leave() when the sites outlive the controller.
#pragma once

#include <uv.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/apps/app_process.h"
#include "controller/apps/app_runtime.h"
#include "controller/restart_policy.h"
#include "controller/state/state_store.h"

namespace scalws::controller {

inline constexpr const char* kDefaultAppDir = "/run/scalws/apps";
inline constexpr uint64_t kAppLogMax = 16ULL << 20;

struct AppManagerOptions {
  std::string state_dir;
  std::string socket_dir = kDefaultAppDir;
  RestartLimits limits;
};

class AppManager final : public AppRuntime {
 public:
  AppManager(uv_loop_t* loop, state::StateStore& store, AppManagerOptions options);
  ~AppManager() override;

  void startAll(Done done);
  void stopAll(Done done);
  void leave();

  // AppRuntime
  std::vector<std::string> socketsOf(const AppSpec& spec) const override;
  common::Status checkSpec(const AppSpec& spec) const override;
  void startApp(const AppSpec& spec, Done done) override;
  void removeApp(const std::string& name, Done done) override;
  void restartApp(const std::string& name, Done done) override;
  void assignmentsChanged() override;
  ipc::Json appStatus(const std::string& name) const override;
  std::string logPath(const std::string& name) const override;

 private:
  struct Entry {
    AppSpec spec;
    std::vector<std::unique_ptr<AppProcess>> processes;
  };

  Entry& addEntry(const AppSpec& spec);
  void startEntry(const std::string& name, bool adopt, Done done);
  void stopEntry(const std::string& name, Done done);
  common::Status prepareDirs(const AppSpec& spec);
  common::Result<sandbox::ExecSandbox> sandboxFor(const AppSpec& spec) const;
  std::string socketDirOf(const std::string& name) const;
  std::string stateDirOf(const std::string& name) const;
  void rotateLogs();
  void discard(const std::string& name);

  uv_loop_t* loop_;
  state::StateStore& store_;
  AppManagerOptions options_;
  std::map<std::string, Entry> apps_;
  std::map<std::string, Entry> discarded_;
  uv_timer_t* rotate_timer_ = nullptr;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace scalws::controller
