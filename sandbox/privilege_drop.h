// The first step of the sandbox: become the instance's user for good.
//
// dropPrivileges() runs setgroups → setresgid → setresuid (real, effective and saved ids
// all set, so nothing is kept to switch back to) and then proves the drop: the ids read
// back are the target's, setuid(0) and setgroups() fail, and no capability is left. It
// refuses uid 0 or gid 0 — dropping "to" root, or keeping root — unless the policy says
// allowRoot. Not running as root with a different target user is an error, not a no-op.
//
// Call it while the process has one thread (glibc then changes every thread's ids anyway,
// but the sandbox as a whole must be applied before threads start; see sandbox.h).
#pragma once

#include "common/status.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace scalws::sandbox {

common::Result<IdentityReport> dropPrivileges(const SandboxPolicy& policy);

}  // namespace scalws::sandbox
