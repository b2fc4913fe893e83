// AppManager: the apps the controller runs, each a set of AppProcesses (app_process.h).
//
// Files: STATE_DIR/apps/NAME/ holds app.pipe, the FIFO every process of the app writes its
// stdout and stderr to, app.log, where the controller copies it (renamed to app.log.1 past
// the --app-log-size cap: fifo_log.h), and the pid files. The sockets live in <app dir>/NAME/
// (--app-dir, default /run/scalws/apps), a directory owned by the app's user with mode 02750 and
// the group of the instance it is assigned to (its own user's group while unassigned): only that
// instance's workers can reach its sockets (which inherit the group, mode 0770). <app dir>/NAME/tmp
// (0700) is its TMPDIR.
//
// The sandbox of each process (ExecSandbox): Landlock read-execute on /usr (and /lib*, links
// into it on Debian), read-only on /etc, /proc and --dir; read-write on --writable and its
// TMPDIR; unix sockets made only in its socket directory; /dev/null, /dev/zero,
// /dev/urandom; TCP connect only to the --connect ports, no TCP bind; the seccomp
// deny-list. The controller runs as root, so the user is switched in the child.
//
// Memory (--memory): a cgroup per process (app_cgroup.h), probed at construction and set
// up when the first app with a limit starts; checkSpec() refuses a limit when there is no
// cgroup to enforce it, saying what is missing. Once a second, each process with a limit
// is checked for an OOM kill (AppProcess::checkMemory). The cgroups go with the app, and
// when a controller stop stops the apps; a controller that leaves them serving keeps them.
//
// Lifecycle as for PHP pools (pool_manager.h): startAll adopts or starts every app of the
// DB at controller start; stopAll on a stop; leave() when the sites outlive the controller.
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/apps/app_cgroup.h"
#include "controller/apps/app_process.h"
#include "controller/apps/app_runtime.h"
#include "controller/fifo_log.h"
#include "controller/restart_policy.h"
#include "controller/state/state_store.h"

namespace scalws::controller {

inline constexpr const char* kDefaultAppDir = "/run/scalws/apps";
inline constexpr uint64_t kAppMemoryCheckMs = 1'000;

struct AppManagerOptions {
  std::string state_dir;
  std::string socket_dir = kDefaultAppDir;
  RestartLimits limits;
  uint64_t log_cap = kDefaultAppLogCap;  // app.log's size before it rotates
  // Where memory cgroups are looked for; unset: this process's (CgroupHost::current()).
  std::optional<CgroupHost> cgroup_host;
};

// The directory of this controller's app cgroups beneath its own cgroup: named after the
// state directory, so controllers sharing a cgroup keep apart and the next controller of
// the same state finds them.
std::string appCgroupSubtree(const std::string& state_dir);

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
    std::unique_ptr<FifoLog> log;
    std::vector<std::unique_ptr<AppProcess>> processes;
  };

  Entry& addEntry(const AppSpec& spec);
  void startEntry(const std::string& name, bool adopt, Done done);
  void stopEntry(const std::string& name, Done done);
  common::Status prepareDirs(const AppSpec& spec);
  common::Result<sandbox::ExecSandbox> sandboxFor(const AppSpec& spec) const;
  std::string socketDirOf(const std::string& name) const;
  std::string stateDirOf(const std::string& name) const;
  void checkMemory();
  // Removes the app's cgroups, trying again for a while when processes are still leaving;
  // `done` (if any) once they are gone or it gave up.
  void removeCgroups(const std::string& name, int attempts_left,
                     std::function<void()> done = nullptr, bool even_if_listed = false);
  void discard(const std::string& name);

  uv_loop_t* loop_;
  state::StateStore& store_;
  AppManagerOptions options_;
  std::map<std::string, Entry> apps_;
  std::map<std::string, Entry> discarded_;
  AppCgroups cgroups_;
  uv_timer_t* memory_timer_ = nullptr;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace scalws::controller
