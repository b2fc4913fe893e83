#include "controller/instances/worker_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "controller/exec_report.h"
#include "controller/instances/worker_probe.h"
#include "ipc/unix_socket.h"

namespace scalws::controller {

using common::Result;
using common::UniqueFd;

namespace {

// The steps the child reports through its ExecReport.
constexpr const char* kWorkerSteps[] = {
    "setsid",     "sched_setaffinity",          "the attach socket",
    "moving fds", "/dev/null and the log pipe", "exec"};

// Runs in the child between fork and exec; the controller is single-threaded, so what
// runs here sees a consistent copy of it.
[[noreturn]] void runChild(const SpawnSpec& spec, int channel, int log, const ExecReport& report,
                           const std::vector<char*>& argv) {
  if (::setsid() < 0) report.fail(0);
  if (!spec.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (uint32_t cpu : spec.cpus.ids()) {
      if (cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
    }
    if (::sched_setaffinity(0, sizeof(set), &set) != 0) report.fail(1);
  }
  int attach = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // Binding with only the family asks the kernel for a fresh abstract name ("autobind").
  if (attach < 0 || ::bind(attach, reinterpret_cast<sockaddr*>(&addr), sizeof(sa_family_t)) != 0 ||
      ::listen(attach, 8) != 0) {
    report.fail(2);
  }
  // Out of the way of 0-4 first, then into place (dup2 clears close-on-exec).
  int high_channel = ::fcntl(channel, F_DUPFD_CLOEXEC, 10);
  int high_attach = ::fcntl(attach, F_DUPFD_CLOEXEC, 10);
  int high_log = ::fcntl(log, F_DUPFD_CLOEXEC, 10);
  if (high_channel < 0 || high_attach < 0 || high_log < 0 ||
      ::dup2(high_channel, kWorkerChannelFd) < 0 || ::dup2(high_attach, kWorkerAttachFd) < 0) {
    report.fail(3);
  }
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0) report.fail(4);
  if (::dup2(high_log, 1) < 0 || ::dup2(high_log, 2) < 0) report.fail(4);
  // Whatever else is open (the state DB, the control socket, other workers' channels and
  // listeners) must not reach the worker; most of it is O_CLOEXEC already, this is the net.
  ::close_range(kWorkerAttachFd + 1, ~0U, CLOSE_RANGE_CLOEXEC);
  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::execv(spec.scalwsd.c_str(), argv.data());
  report.fail(5);
}

}  // namespace

Result<SpawnedWorker> spawnWorker(const SpawnSpec& spec) {
  auto pair = ipc::socketPair();
  if (!pair.ok()) return pair.status();
  Result<ExecReport> report = ExecReport::open();
  if (!report.ok()) return report.status();
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return common::errnoStatus(errno, "pipe2");
  UniqueFd log_read(pipe_fds[0]);
  UniqueFd log_write(pipe_fds[1]);

  std::string channel_arg = std::to_string(kWorkerChannelFd);
  std::string attach_arg = std::to_string(kWorkerAttachFd);
  std::vector<std::string> args = {spec.scalwsd, spec.name_flag, spec.instance, "--ipc-fd",
                                   channel_arg,  "--attach-fd",  attach_arg};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) return common::errnoStatus(errno, "fork");
  if (pid == 0) runChild(spec, pair->second.get(), log_write.get(), *report, argv);

  log_write.reset();
  pair->second.reset();
  if (std::optional<ExecReport::Failure> e = report->wait(pid)) {
    int step = e->step >= 0 && e->step < 6 ? e->step : 5;
    std::string what = std::string("starting ") + spec.scalwsd + ": " + kWorkerSteps[step];
    return common::errnoStatus(e->err, what);
  }
  SpawnedWorker out;
  out.pid = pid;
  out.channel = std::move(pair->first);
  out.log = std::move(log_read);
  Result<UniqueFd> pidfd = openPidfd(pid);
  if (!pidfd.ok()) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return pidfd.status();
  }
  out.pidfd = std::move(*pidfd);
  return out;
}

}  // namespace scalws::controller
