#include "sandbox/exec_sandbox.h"

#include <grp.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "sandbox/seccomp_context.h"
#include "sandbox/seccomp_deny_list.h"

namespace scalws::sandbox {

using common::Result;
using common::Status;

namespace {

using Filter = SeccompContext;

// The BPF libseccomp generated, read back from a memfd.
Result<std::vector<sock_filter>> exportBpf(void* ctx) {
  int fd = memfd_create("scalws-seccomp-bpf", MFD_CLOEXEC);
  if (fd < 0) return common::errnoStatus(errno, "memfd_create");
  int rc = seccomp_export_bpf(ctx, fd);
  std::string bytes;
  if (rc == 0) {
    char buf[4096];
    off_t offset = 0;
    ssize_t n;
    while ((n = pread(fd, buf, sizeof(buf), offset)) > 0) {
      bytes.append(buf, static_cast<size_t>(n));
      offset += n;
    }
  }
  close(fd);
  if (rc != 0) return seccompError(rc, "exporting the filter");
  if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0) {
    return common::internalError("seccomp: the exported filter is not a BPF program");
  }
  std::vector<sock_filter> program(bytes.size() / sizeof(sock_filter));
  std::memcpy(program.data(), bytes.data(), bytes.size());
  return program;
}

}  // namespace

Result<std::vector<sock_filter>> compileSeccompDenyList(SeccompReport& report) {
  Filter filter(seccomp_init(SCMP_ACT_ALLOW));
  if (!filter) return common::internalError("seccomp_init failed");
  // A call through a foreign ABI (int 0x80, x32) would use other numbers than the ones
  // denied below: it kills the process instead.
  int rc = seccomp_attr_set(filter.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc != 0) return seccompError(rc, "setting the foreign-architecture action");
  report = SeccompReport{};
  report.denyList = true;
  std::vector<int> denied;
  for (const SyscallDenial& entry : seccompDenyList()) {
    int nr = seccomp_syscall_resolve_name(entry.name);
    if (nr == __NR_SCMP_ERROR) {
      return common::internalError(std::string("seccomp deny-list names an unknown syscall: ") +
                                   entry.name);
    }
    if (nr < 0) {
      if (std::find(report.notOnThisArch.begin(), report.notOnThisArch.end(), entry.name) ==
          report.notOnThisArch.end()) {
        report.notOnThisArch.emplace_back(entry.name);
      }
      continue;
    }
    std::vector<scmp_arg_cmp> checks;
    for (const ArgCheck& check : entry.checks) {
      if (check.op == ArgCheck::Op::kMaskedEq) {
        checks.push_back(SCMP_CMP(check.arg, SCMP_CMP_MASKED_EQ, check.mask, check.value));
      }
    }
    rc = seccomp_rule_add_array(filter.get(), SCMP_ACT_ERRNO(static_cast<uint16_t>(entry.error)),
                                nr, static_cast<unsigned>(checks.size()), checks.data());
    if (rc != 0) return seccompError(rc, std::string("denying ") + entry.name);
    ++report.rules;
    if (std::find(denied.begin(), denied.end(), nr) == denied.end()) denied.push_back(nr);
  }
  report.deniedSyscalls = denied.size();
  return exportBpf(filter.get());
}

Result<ExecSandbox> ExecSandbox::prepare(const ExecSandboxSpec& spec) {
  const Identity& id = spec.identity;
  if (id.uid == 0 || id.gid == 0) {
    return Status(common::StatusCode::kPermissionDenied,
                  "refusing to run a program as \"" + id.user + "\" (uid 0 or gid 0)");
  }
  ExecSandbox box;
  box.uid_ = id.uid;
  box.gid_ = id.gid;
  box.groups_ = id.groups.empty() ? std::vector<gid_t>{id.gid} : id.groups;
  SandboxReport& report = box.report_;
  report.mode = SandboxMode::kOn;
  report.identity = IdentityReport{true, id.user, id.uid, id.gid, box.groups_};
  report.noNewPrivs = true;

  SandboxPolicy policy;
  policy.mode = SandboxMode::kOn;
  policy.paths = spec.paths;
  policy.tcpConnectPorts = spec.tcpConnectPorts;
  std::sort(policy.tcpConnectPorts.begin(), policy.tcpConnectPorts.end());
  policy.tcpConnectPorts.erase(
      std::unique(policy.tcpConnectPorts.begin(), policy.tcpConnectPorts.end()),
      policy.tcpConnectPorts.end());
  Result<LandlockRuleset> ruleset = prepareLandlock(policy, report);
  if (!ruleset.ok()) return ruleset.status();
  box.ruleset_.emplace(std::move(ruleset).value());
  // What restrictLandlock() would record once the child restricts itself.
  Result<LandlockPlan> plan = planLandlock(policy, report.landlock.abi);
  if (!plan.ok()) return plan.status();
  report.landlock.enforced = report.landlock.abi > 0;
  report.landlock.handledFs = plan->handledFs;
  report.landlock.handledNet = plan->handledNet;
  report.landlock.scoped = plan->scoped;

  Result<std::vector<sock_filter>> program = compileSeccompDenyList(report.seccomp);
  if (!program.ok()) return program.status();
  box.seccomp_ = std::move(program).value();
  report.seccomp.enforced = true;
  return box;
}

ExecSandbox::Step ExecSandbox::enter() const noexcept {
  if (setgroups(groups_.size(), groups_.data()) != 0) return Step::kGroups;
  if (setresgid(gid_, gid_, gid_) != 0) return Step::kGid;
  if (setresuid(uid_, uid_, uid_) != 0) return Step::kUid;
  if (setuid(0) == 0 || setgid(0) == 0) {
    errno = EPERM;
    return Step::kStillPrivileged;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Step::kNoNewPrivs;
  if (ruleset_) {
    int err = ruleset_->restrictCurrentThread();
    if (err != 0) {
      errno = err;
      return Step::kLandlock;
    }
  }
  sock_fprog prog{static_cast<unsigned short>(seccomp_.size()),
                  const_cast<sock_filter*>(seccomp_.data())};
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_LOG, &prog) != 0) {
    return Step::kSeccomp;
  }
  return Step::kNone;
}

std::string_view ExecSandbox::stepName(Step step) {
  switch (step) {
    case Step::kNone:
      return "none";
    case Step::kGroups:
      return "setgroups";
    case Step::kGid:
      return "setresgid";
    case Step::kUid:
      return "setresuid";
    case Step::kStillPrivileged:
      return "dropping root (setuid(0) still worked)";
    case Step::kNoNewPrivs:
      return "PR_SET_NO_NEW_PRIVS";
    case Step::kLandlock:
      return "landlock_restrict_self";
    case Step::kSeccomp:
      return "the seccomp filter";
  }
  return "?";
}

}  // namespace scalws::sandbox
