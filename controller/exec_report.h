// How a child between fork and exec tells its parent which step failed: a close-on-exec
// pipe that a successful exec closes unread, or that carries the step and errno of the
// first step that failed. The controller's spawners (workers, php-fpm masters, apps)
// turn it into a Status that names the step.
#pragma once

#include <sys/types.h>

#include <optional>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::controller {

class ExecReport {
 public:
  struct Failure {
    int step;  // the spawner's own numbering
    int err;   // errno when it failed
  };

  static common::Result<ExecReport> open();

  // In the child: reports `step` with the current errno and exits 127.
  [[noreturn]] void fail(int step) const noexcept;
  // In the parent, after fork: nullopt once the child exec'd; otherwise what failed (the
  // child is reaped).
  std::optional<Failure> wait(pid_t child);

 private:
  ExecReport(common::UniqueFd read, common::UniqueFd write)
      : read_(std::move(read)), write_(std::move(write)) {}

  common::UniqueFd read_;
  common::UniqueFd write_;
};

}  // namespace scalws::controller
