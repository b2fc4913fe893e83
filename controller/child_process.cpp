#include "controller/child_process.h"

#include <string.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>

namespace scalws::controller {

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string describeWait(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (name != nullptr ? " (SIG" + std::string(name) + ")" : "");
  }
  return "ended";
}

std::optional<std::string> reapExited(pid_t pid, bool is_child) {
  if (!is_child) return "exited";  // not ours to wait for
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return std::nullopt;
  return r == pid ? describeWait(status) : "exited";
}

}  // namespace scalws::controller
