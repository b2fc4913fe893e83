#include "sandbox/seccomp_filter.h"

#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <vector>

#include "sandbox/seccomp_allow_list.h"
#include "sandbox/seccomp_context.h"
#include "sandbox/seccomp_front_list.h"

namespace scalws::sandbox {
namespace {

using common::Result;
using common::Status;

using Filter = SeccompContext;

void addCheck(const ArgCheck& check, pid_t self, std::vector<scmp_arg_cmp>& out) {
  switch (check.op) {
    case ArgCheck::Op::kNone:
      return;
    case ArgCheck::Op::kMaskedEq:
      out.push_back(SCMP_CMP(check.arg, SCMP_CMP_MASKED_EQ, check.mask, check.value));
      return;
    case ArgCheck::Op::kEqSelfPid:
      out.push_back(
          SCMP_CMP(check.arg, SCMP_CMP_MASKED_EQ, check.mask, static_cast<uint64_t>(self)));
      return;
  }
}

Result<Filter> buildFilter(const SandboxPolicy& policy, SeccompReport& report) {
  uint32_t defaultAction =
      policy.seccompAction == SeccompAction::kKill ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_ERRNO(EPERM);
  Filter filter(seccomp_init(defaultAction));
  if (!filter) return common::internalError("seccomp_init failed");
  int rc = seccomp_attr_set(filter.get(), SCMP_FLTATR_CTL_LOG, 1);
  if (rc != 0) return seccompError(rc, "enabling logging");
  rc = seccomp_attr_set(filter.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc != 0) return seccompError(rc, "setting the foreign-architecture action");

  report = SeccompReport{};
  report.action = policy.seccompAction;
  pid_t self = getpid();
  std::vector<int> allowed;
  report.profile = policy.seccompProfile;
  std::span<const SyscallAllowance> list = policy.seccompProfile == SeccompProfile::kFront
                                               ? seccompFrontAllowList()
                                               : seccompAllowList();
  for (const SyscallAllowance& entry : list) {
    if (entry.onlyWithUnixConnect && !policy.unixConnect) continue;
    if (entry.onlyWithUdpDatagrams && !policy.udpDatagrams) continue;
    int nr = seccomp_syscall_resolve_name(entry.name);
    if (nr == __NR_SCMP_ERROR) {
      return common::internalError(std::string("seccomp allow-list names an unknown syscall: ") +
                                   entry.name);
    }
    if (nr < 0) {  // a pseudo number: the syscall exists on other architectures only
      if (std::find(report.notOnThisArch.begin(), report.notOnThisArch.end(), entry.name) ==
          report.notOnThisArch.end()) {
        report.notOnThisArch.emplace_back(entry.name);
      }
      continue;
    }
    std::vector<scmp_arg_cmp> checks;
    for (const ArgCheck& check : entry.checks) addCheck(check, self, checks);
    rc = seccomp_rule_add_array(filter.get(), SCMP_ACT_ALLOW, nr,
                                static_cast<unsigned>(checks.size()), checks.data());
    if (rc != 0) return seccompError(rc, std::string("allowing ") + entry.name);
    ++report.rules;
    if (std::find(allowed.begin(), allowed.end(), nr) == allowed.end()) allowed.push_back(nr);
  }
  report.allowedSyscalls = allowed.size();
  report.udpDatagrams = policy.udpDatagrams;

  for (const SyscallErrno& entry : seccompErrnoList()) {
    int nr = seccomp_syscall_resolve_name(entry.name);
    if (nr < 0) continue;
    rc = seccomp_rule_add(filter.get(), SCMP_ACT_ERRNO(static_cast<uint16_t>(entry.error)), nr, 0);
    if (rc != 0) return seccompError(rc, std::string("refusing ") + entry.name);
  }
  return filter;
}

}  // namespace

Status applySeccomp(const SandboxPolicy& policy, SandboxReport& report) {
  Result<Filter> filter = buildFilter(policy, report.seccomp);
  if (!filter.ok()) return filter.status();
  // seccomp_load() sets no_new_privs itself (SCMP_FLTATR_CTL_NNP defaults to on).
  int rc = seccomp_load(filter->get());
  if (rc != 0) return seccompError(rc, "loading the filter");
  report.noNewPrivs = true;
  report.seccomp.enforced = true;
  return common::okStatus();
}

Result<std::string> seccompFilterText(const SandboxPolicy& policy) {
  SeccompReport ignored;
  Result<Filter> filter = buildFilter(policy, ignored);
  if (!filter.ok()) return filter.status();
  int fd = memfd_create("scalws-seccomp-pfc", MFD_CLOEXEC);
  if (fd < 0) return common::errnoStatus(errno, "memfd_create");
  int rc = seccomp_export_pfc(filter->get(), fd);
  std::string text;
  if (rc == 0) {
    char buf[4096];
    off_t offset = 0;
    ssize_t n;
    while ((n = pread(fd, buf, sizeof(buf), offset)) > 0) {
      text.append(buf, static_cast<size_t>(n));
      offset += n;
    }
  }
  close(fd);
  if (rc != 0) return seccompError(rc, "exporting the filter");
  return text;
}

}  // namespace scalws::sandbox
