#include "controller/apps/app_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"
#include "controller/apps/app_cgroup.h"
#include "controller/exec_report.h"

namespace scalws::controller {

using common::Result;
using common::UniqueFd;

namespace {

// ExecReport steps: < 0 a step of ours, >= 0 an ExecSandbox::Step.
constexpr int kStepCgroup = -1, kStepSetsid = -2, kStepFds = -3, kStepChdir = -4, kStepExec = -5;

std::string stepText(int step, const AppSpawn& spawn) {
  switch (step) {
    case kStepCgroup:
      return "joining its cgroup " + spawn.cgroup;
    case kStepSetsid:
      return "setsid";
    case kStepFds:
      return "moving fds";
    case kStepChdir:
      return "entering " + spawn.dir;
    case kStepExec:
      return "exec";
    default:
      return "entering the sandbox: " + std::string(sandbox::ExecSandbox::stepName(
                                            static_cast<sandbox::ExecSandbox::Step>(step)));
  }
}

}  // namespace

Result<pid_t> spawnApp(const AppSpawn& spawn) {
  std::string binary = spawn.argv.empty() ? std::string() : spawn.argv[0];
  std::vector<std::string> args = spawn.argv;
  std::vector<std::string> env = spawn.env;
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  auto failed = [&](const std::string& what) {
    return common::errnoStatus(errno, "starting " + binary + ": " + what);
  };
  // The read end first: a FIFO's write-only open waits for a reader (the controller holds
  // one too, but this one is the app's own).
  UniqueFd log_read(::open(spawn.log_pipe.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!log_read) return failed("opening " + spawn.log_pipe);
  UniqueFd log_write(::open(spawn.log_pipe.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
  if (!log_write || ::fcntl(log_write.get(), F_SETFL, 0) != 0) {
    return failed("opening " + spawn.log_pipe);
  }
  UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_fd) return failed("opening /dev/null");
  UniqueFd cgroup_procs;
  if (!spawn.cgroup.empty()) {
    cgroup_procs =
        UniqueFd(::open(AppCgroups::procsFile(spawn.cgroup).c_str(), O_WRONLY | O_CLOEXEC));
    if (!cgroup_procs) return failed("opening " + AppCgroups::procsFile(spawn.cgroup));
  }
  Result<ExecReport> report = ExecReport::open();
  if (!report.ok()) return report.status();
  const char* dir = spawn.dir.c_str();

  pid_t pid = ::fork();
  if (pid < 0) return failed("fork");
  if (pid == 0) {
    auto fail = [&](int step) { report->fail(step); };
    if (cgroup_procs && ::write(cgroup_procs.get(), "0", 1) != 1) fail(kStepCgroup);
    if (::setsid() < 0) fail(kStepSetsid);
    if (::dup2(null_fd.get(), 0) < 0 || ::dup2(log_write.get(), 1) < 0 ||
        ::dup2(log_write.get(), 2) < 0) {
      fail(kStepFds);
    }
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    if (::fcntl(log_read.get(), F_SETFD, 0) != 0) fail(kStepFds);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    ::umask(007);
    sandbox::ExecSandbox::Step step = spawn.sandbox->enter();
    if (step != sandbox::ExecSandbox::Step::kNone) fail(static_cast<int>(step));
    if (::chdir(dir) != 0) fail(kStepChdir);
    ::execve(argv[0], argv.data(), envp.data());
    fail(kStepExec);
  }
  if (std::optional<ExecReport::Failure> e = report->wait(pid)) {
    return common::errnoStatus(e->err, "starting " + binary + ": " + stepText(e->step, spawn));
  }
  return pid;
}

}  // namespace scalws::controller
