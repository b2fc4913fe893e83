// AppRuntime: what the control handlers need from the part that runs apps (AppManager),
// as an interface so the handlers can be tested with a fake one.
//
// Every Done fires exactly once, on the loop thread, never from inside the call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "controller/apps/app_spec.h"
#include "ipc/message.h"

namespace scalws::controller {

class AppRuntime {
 public:
  using Done = std::function<void(const common::Status&)>;

  virtual ~AppRuntime() = default;

  // The unix sockets `spec` listens on (node: one per process; python: one).
  virtual std::vector<std::string> socketsOf(const AppSpec& spec) const = 0;
  // Checks what can be checked before a start: the user, the directories, --memory.
  virtual common::Status checkSpec(const AppSpec& spec) const = 0;
  // Starts `spec` (not in the store yet); ok once every process accepts (supervised from
  // then on), else why not (nothing of it is left running).
  virtual void startApp(const AppSpec& spec, Done done) = 0;
  // Stops it gracefully (SIGTERM, SIGKILL after a grace) and removes its sockets.
  virtual void removeApp(const std::string& name, Done done) = 0;
  // Stops and starts it again (a failed app gets a fresh crash count).
  virtual void restartApp(const std::string& name, Done done) = 0;
  // The store's assignments changed: each app's socket directory gets the group of its
  // (new) instance's user.
  virtual void assignmentsChanged() = 0;
  // {state, processes:[...], log_path, socket_dir, sandbox:[lines]} or null.
  virtual ipc::Json appStatus(const std::string& name) const = 0;
  virtual std::string logPath(const std::string& name) const = 0;
};

}  // namespace scalws::controller
