#include "sandbox/landlock.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/landlock_abi.h"

namespace scalws::sandbox {
namespace {

namespace abi = landlock_abi;
using common::Result;
using common::Status;

// Read beneath a docroot: open files for reading and list directories. No EXECUTE: the
// worker never runs a program, and a docroot is exactly where an attacker would drop one.
constexpr uint64_t kReadDirRights = abi::kFsReadFile | abi::kFsReadDir;
constexpr uint64_t kReadFileRights = abi::kFsReadFile;
// A cache or temp directory: create, write, truncate, rename (REFER: from a temp dir into
// the cache tree) and remove files and directories. No devices, fifos, sockets, symlinks.
constexpr uint64_t kWriteDirRights = abi::kFsReadFile | abi::kFsReadDir | abi::kFsWriteFile |
                                     abi::kFsTruncate | abi::kFsMakeReg | abi::kFsMakeDir |
                                     abi::kFsRemoveFile | abi::kFsRemoveDir | abi::kFsRefer;
// A log file: opened for writing (append). Not truncated and not read back, so a worker
// bug cannot erase or leak another request's log lines.
constexpr uint64_t kWriteFileRights = abi::kFsWriteFile;
// An app's socket directory: it binds its unix socket there (and a server such as gunicorn
// removes a stale one first). Nothing else is made there.
constexpr uint64_t kSocketDirRights = abi::kFsReadDir | abi::kFsMakeSock | abi::kFsRemoveFile;
// /dev/null and its kind: read and written, never truncated or ioctl'd.
constexpr uint64_t kDeviceRights = abi::kFsReadFile | abi::kFsWriteFile;

struct ScopedFd {
  int fd = -1;
  explicit ScopedFd(int f) : fd(f) {}
  ~ScopedFd() {
    if (fd >= 0) close(fd);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
};

std::string abiText(int abiVersion) {
  return "the kernel has ABI " + std::to_string(abiVersion);
}

Status addPathRule(int rulesetFd, const PathRule& rule, uint64_t handledFs,
                   LandlockPathReport& out) {
  ScopedFd fd(open(rule.path.c_str(), O_PATH | O_CLOEXEC));
  if (fd.fd < 0) return common::errnoStatus(errno, "sandbox path " + rule.path);
  struct stat st;
  if (fstat(fd.fd, &st) != 0) return common::errnoStatus(errno, "fstat " + rule.path);
  bool directory = S_ISDIR(st.st_mode);
  if ((rule.kind == PathKind::kDirectory && !directory) ||
      (rule.kind == PathKind::kFile && directory)) {
    return common::invalidArgument("sandbox path " + rule.path + " should be a " +
                                   std::string(pathKindName(rule.kind)) + " but is " +
                                   (directory ? "a directory" : "not a directory"));
  }
  abi::PathBeneathAttr attr{landlockPathRights(rule.access, directory, handledFs), fd.fd};
  if (syscall(SYS_landlock_add_rule, rulesetFd, abi::kRulePathBeneath, &attr, 0) != 0) {
    return common::errnoStatus(errno, "landlock rule for " + rule.path);
  }
  out = LandlockPathReport{rule.path, rule.access, directory, attr.allowed_access};
  return common::okStatus();
}

}  // namespace

int probeLandlockAbi() {
  long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, abi::kCreateRulesetVersion);
  // ENOSYS: not built in; EOPNOTSUPP: built in but not enabled at boot (lsm=).
  return v > 0 ? static_cast<int>(v) : 0;
}

uint64_t landlockFsRightsForAbi(int abiVersion) {
  if (abiVersion < 1) return 0;
  uint64_t rights = (abi::kFsMakeSym << 1) - 1;  // ABI 1: EXECUTE .. MAKE_SYM
  if (abiVersion >= 2) rights |= abi::kFsRefer;
  if (abiVersion >= 3) rights |= abi::kFsTruncate;
  if (abiVersion >= 5) rights |= abi::kFsIoctlDev;
  return rights;
}

uint64_t landlockPathRights(PathAccess access, bool directory, uint64_t handledFs) {
  uint64_t rights = 0;
  switch (access) {
    case PathAccess::kReadOnly:
      rights = directory ? kReadDirRights : kReadFileRights;
      break;
    case PathAccess::kReadWrite:
      rights = directory ? kWriteDirRights : kWriteFileRights;
      break;
    case PathAccess::kReadExecute:
      rights = (directory ? kReadDirRights : kReadFileRights) | abi::kFsExecute;
      break;
    case PathAccess::kSockets:
      rights = directory ? kSocketDirRights : 0;
      break;
    case PathAccess::kDevice:
      rights = kDeviceRights;
      break;
  }
  if (!directory) rights &= abi::kFsFileRights;
  return rights & handledFs;
}

Result<LandlockPlan> planLandlock(const SandboxPolicy& policy, int abiVersion) {
  LandlockPlan plan;
  plan.abi = abiVersion;
  bool required = policy.mode == SandboxMode::kRequired;
  if (abiVersion < 1) {
    if (required) {
      return Status(common::StatusCode::kFailedPrecondition,
                    "sandbox = \"required\" but the kernel has no Landlock (not built in or "
                    "not enabled with lsm=)");
    }
    plan.degraded.push_back("Landlock is not available: no filesystem, TCP or scope restrictions");
    return plan;
  }
  if (abiVersion < 4 && required) {
    return Status(common::StatusCode::kFailedPrecondition,
                  "sandbox = \"required\" needs Landlock ABI 4 (Linux 6.7) for TCP rules; " +
                      abiText(abiVersion));
  }
  plan.handledFs = landlockFsRightsForAbi(abiVersion);
  if (abiVersion < 3) {
    plan.degraded.push_back("truncate is not restricted: needs Landlock ABI 3 (Linux 6.2); " +
                            abiText(abiVersion));
  }
  if (abiVersion >= 4) {
    plan.handledNet = abi::kNetBindTcp | abi::kNetConnectTcp;
  } else {
    plan.degraded.push_back(
        "TCP bind and connect are not restricted: needs Landlock ABI 4 (Linux 6.7); " +
        abiText(abiVersion));
  }
  if (abiVersion < 5) {
    plan.degraded.push_back(
        "ioctl on devices is not restricted: needs Landlock ABI 5 (Linux 6.10); " +
        abiText(abiVersion));
  }
  if (abiVersion >= 6) {
    plan.scoped = abi::kScopeAbstractUnixSocket | abi::kScopeSignal;
  } else {
    plan.degraded.push_back(
        "abstract unix sockets and signals are not scoped: needs Landlock ABI 6 (Linux 6.12); " +
        abiText(abiVersion));
  }
  if (policy.unixConnect) {
    // Landlock (up to ABI 7) has no rule for connect() to a pathname unix socket.
    plan.degraded.push_back(
        "connect() to pathname unix sockets is not restricted by path (Landlock has no such "
        "rule); only seccomp's socket(AF_UNIX) allowance limits it");
  }
  return plan;
}

LandlockRuleset::~LandlockRuleset() {
  if (fd_ >= 0) close(fd_);
}

LandlockRuleset::LandlockRuleset(LandlockRuleset&& other) noexcept
    : fd_(other.fd_), plan_(std::move(other.plan_)) {
  other.fd_ = -1;
}

int LandlockRuleset::restrictCurrentThread() const noexcept {
  if (fd_ < 0) return 0;
  return syscall(SYS_landlock_restrict_self, fd_, 0U) == 0 ? 0 : errno;
}

Result<LandlockRuleset> prepareLandlock(const SandboxPolicy& policy, SandboxReport& report) {
  Result<LandlockPlan> plan = planLandlock(policy, probeLandlockAbi());
  if (!plan.ok()) return plan.status();
  LandlockReport& out = report.landlock;
  out = LandlockReport{};
  out.abi = plan->abi;
  report.degraded.insert(report.degraded.end(), plan->degraded.begin(), plan->degraded.end());
  LandlockRuleset prepared;
  prepared.plan_ = *plan;
  if (plan->abi < 1) return prepared;

  abi::RulesetAttr attr;
  attr.handled_access_fs = plan->handledFs;
  attr.handled_access_net = plan->handledNet;
  attr.scoped = plan->scoped;
  prepared.fd_ = static_cast<int>(
      syscall(SYS_landlock_create_ruleset, &attr, abi::rulesetAttrSize(plan->abi), 0U));
  if (prepared.fd_ < 0) return common::errnoStatus(errno, "landlock_create_ruleset");

  for (const PathRule& rule : policy.paths) {
    LandlockPathReport pathReport;
    SCALWS_RETURN_IF_ERROR(addPathRule(prepared.fd_, rule, plan->handledFs, pathReport));
    out.paths.push_back(std::move(pathReport));
  }
  if (plan->handledNet != 0) {
    // No bind rule at all: every TCP bind is denied. One connect rule per allowed port.
    for (uint16_t port : policy.tcpConnectPorts) {
      abi::NetPortAttr attrPort{abi::kNetConnectTcp, port};
      if (syscall(SYS_landlock_add_rule, prepared.fd_, abi::kRuleNetPort, &attrPort, 0) != 0) {
        return common::errnoStatus(errno, "landlock connect rule for port " + std::to_string(port));
      }
      out.tcpConnectPorts.push_back(port);
    }
  }
  return prepared;
}

Status restrictLandlock(LandlockRuleset& ruleset, SandboxReport& report) {
  if (ruleset.fd_ < 0) return common::okStatus();  // no Landlock: already reported degraded
  // landlock_restrict_self() needs no_new_privs (or CAP_SYS_ADMIN, which we do not rely on).
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return common::errnoStatus(errno, "prctl(PR_SET_NO_NEW_PRIVS)");
  }
  report.noNewPrivs = true;
  // Flags 0: with ABI 7 the kernel's audit logs denials of this process (not after exec).
  if (syscall(SYS_landlock_restrict_self, ruleset.fd_, 0U) != 0) {
    return common::errnoStatus(errno, "landlock_restrict_self");
  }
  LandlockReport& out = report.landlock;
  out.enforced = true;
  out.handledFs = ruleset.plan_.handledFs;
  out.handledNet = ruleset.plan_.handledNet;
  out.scoped = ruleset.plan_.scoped;
  return common::okStatus();
}

Status applyLandlock(const SandboxPolicy& policy, SandboxReport& report) {
  Result<LandlockRuleset> ruleset = prepareLandlock(policy, report);
  if (!ruleset.ok()) return ruleset.status();
  return restrictLandlock(*ruleset, report);
}

}  // namespace scalws::sandbox
