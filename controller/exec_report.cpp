#include "controller/exec_report.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace scalws::controller {

common::Result<ExecReport> ExecReport::open() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return common::errnoStatus(errno, "pipe2");
  return ExecReport(common::UniqueFd(fds[0]), common::UniqueFd(fds[1]));
}

void ExecReport::fail(int step) const noexcept {
  Failure failure{step, errno};
  ssize_t ignored = ::write(write_.get(), &failure, sizeof(failure));
  (void)ignored;
  _exit(127);
}

std::optional<ExecReport::Failure> ExecReport::wait(pid_t child) {
  write_.reset();  // only the child's copy keeps the pipe open now
  Failure failure{};
  ssize_t n;
  do {
    n = ::read(read_.get(), &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  read_.reset();
  if (n != static_cast<ssize_t>(sizeof(failure))) return std::nullopt;
  ::waitpid(child, nullptr, 0);
  return failure;
}

}  // namespace scalws::controller
