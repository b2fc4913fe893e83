// applySandbox(): the one call a worker makes, once everything it needs is open.
//
// Order: setgroups/setgid/setuid to the policy's user →
// PR_SET_NO_NEW_PRIVS → Landlock → seccomp → read back /proc/self/status and check that
// the kernel shows what the report claims. With SandboxMode::kOff only the privilege drop
// happens.
//
// Preconditions: the process has a single thread (Landlock and the credentials apply to
// the calling thread and what it creates afterwards, so loop threads are started after this
// returns), and every descriptor the worker will use outside the policy's paths is already
// open (listeners, docroot dirfds, TLS keys, logs).
//
// Fail closed: on error the process may be partly restricted and must exit; the error says
// which step failed. What the kernel cannot enforce (old Landlock ABI) is not an error in
// SandboxMode::kOn: it is logged as a warning and listed in report.degraded.
#pragma once

#include "common/status.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace scalws::sandbox {

common::Result<SandboxReport> applySandbox(const SandboxPolicy& policy);

}  // namespace scalws::sandbox
