// PoolRuntime: what the control handlers need from the part that runs managed PHP pools
// (the PoolManager), as an interface so the handlers can be tested with a fake one.
//
// Every Done fires exactly once, on the loop thread, never from inside the call.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "controller/state/records.h"
#include "ipc/message.h"

namespace scalws::controller {

inline constexpr const char* kDefaultPhpFpm = "/usr/sbin/php-fpm8.2";

class PoolRuntime {
 public:
  using Done = std::function<void(const common::Status&)>;

  virtual ~PoolRuntime() = default;

  // The address a managed pool named `name` listens on: "unix:<pool dir>/<name>.sock".
  virtual std::string managedAddress(const std::string& name) const = 0;
  // The php-fpm binary used when `pool add --managed` names none.
  virtual std::string defaultPhpFpm() const = 0;
  // Whether `path` is a php-fpm this controller may run (as root): the default one or one
  // it was started with --allow-php-fpm for. Nothing else is ever run.
  virtual bool phpFpmAllowed(const std::string& path) const { return path == defaultPhpFpm(); }

  // Writes the config of the managed `pool` (not in the store yet) and starts php-fpm;
  // ok once it accepts on its socket (it is supervised from then on), else why not
  // (nothing of it is left running).
  virtual void startPool(const state::PoolRecord& pool, Done done) = 0;
  // Stops the managed pool `name` (gracefully, killed if it takes too long) and removes its
  // files and socket. Ok when it runs nothing here.
  virtual void removePool(const std::string& name, Done done) = 0;
  // The store's pool assignments changed: each managed pool's socket gets the group of its
  // (new) instance's user, at once and in the config of its next start.
  virtual void assignmentsChanged() = 0;
  // {state, pid, restarts, last_exit, started_ms, adopted, config_path, log_path} of a
  // managed pool, or null when none runs here under that name.
  virtual ipc::Json poolStatus(const std::string& name) const = 0;
};

}  // namespace scalws::controller
