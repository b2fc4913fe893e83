#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <optional>

#include "common/log.h"
#include "sandbox/landlock.h"
#include "sandbox/privilege_drop.h"
#include "sandbox/process_status.h"
#include "sandbox/seccomp_filter.h"

namespace scalws::sandbox {
namespace {

using common::Result;
using common::Status;

class StatusFile {
 public:
  StatusFile() {
    fd_ = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    openErrno_ = fd_ < 0 ? errno : 0;
  }
  ~StatusFile() {
    if (fd_ >= 0) close(fd_);
  }
  StatusFile(const StatusFile&) = delete;
  StatusFile& operator=(const StatusFile&) = delete;

  Result<ProcessStatus> read() const {
    if (fd_ < 0) return common::errnoStatus(openErrno_, "open /proc/self/status");
    return readProcessStatus(fd_);
  }

 private:
  int fd_ = -1;
  int openErrno_ = 0;
};

Status applyLayers(const SandboxPolicy& policy, const StatusFile& statusFile,
                   SandboxReport& report) {
  // Landlock and seccomp bind the calling thread and its future children only; a thread
  // that already runs would stay outside the sandbox.
  Result<ProcessStatus> before = statusFile.read();
  if (!before.ok()) return before.status();
  if (policy.mode != SandboxMode::kOff && before->threads != 1) {
    return Status(common::StatusCode::kFailedPrecondition,
                  "the sandbox must be applied before threads start (" +
                      std::to_string(before->threads) + " threads running)");
  }

  // glibc reads /etc/localtime on its first time conversion, even for gmtime_r (the log's
  // timestamps): done here, not refused by the sandbox later (the front may open no file).
  tzset();

  // The rule paths are opened while the process still has its starting privileges.
  std::optional<LandlockRuleset> ruleset;
  if (policy.mode != SandboxMode::kOff) {
    Result<LandlockRuleset> prepared = prepareLandlock(policy, report);
    if (!prepared.ok()) return prepared.status();
    ruleset.emplace(std::move(prepared).value());
  }

  Result<IdentityReport> identity = dropPrivileges(policy);
  if (!identity.ok()) return identity.status();
  report.identity = std::move(identity).value();
  if (policy.mode == SandboxMode::kOff) return common::okStatus();

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return common::errnoStatus(errno, "prctl(PR_SET_NO_NEW_PRIVS)");
  }
  report.noNewPrivs = true;
  SCALWS_RETURN_IF_ERROR(restrictLandlock(*ruleset, report));
  SCALWS_RETURN_IF_ERROR(applySeccomp(policy, report));
  return common::okStatus();
}

}  // namespace

Result<SandboxReport> applySandbox(const SandboxPolicy& policy) {
  SandboxReport report;
  report.mode = policy.mode;
  // Opened first: once Landlock is in force, /proc is outside every allowed path.
  StatusFile statusFile;

  Status applied = applyLayers(policy, statusFile, report);
  if (!applied.ok()) {
    return Status(applied.code(), "sandbox: " + applied.message());
  }

  Result<ProcessStatus> after = statusFile.read();
  if (!after.ok()) return after.status();
  SCALWS_RETURN_IF_ERROR(checkProcessStatus(*after, report));
  report.verified = true;

  if (policy.mode == SandboxMode::kOff) {
    LOG_WARN("sandbox is off: no Landlock and no seccomp for this worker");
  }
  for (const std::string& degraded : report.degraded) {
    LOG_WARN("sandbox degraded: %s", degraded.c_str());
  }
  return report;
}

}  // namespace scalws::sandbox
