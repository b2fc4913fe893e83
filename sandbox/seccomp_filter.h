// seccomp: the last layer. Loads the allow-list (seccomp_allow_list.h) as a libseccomp
// filter for the native architecture.
//
// A syscall outside the list fails with EPERM and is logged by the kernel's audit
// (SCMP_FLTATR_CTL_LOG), or kills the process (SeccompAction::kKill); a syscall from a
// foreign architecture ABI (int 0x80, x32) kills the process. The filter holds for the
// calling thread and every thread and process created after; apply it last, once
// everything else (privilege drop, Landlock) is done, since those need syscalls the list
// does not allow.
#pragma once

#include <string>

#include "common/status.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace scalws::sandbox {

// Builds and loads the filter; fills report.seccomp.
common::Status applySeccomp(const SandboxPolicy& policy, SandboxReport& report);

// Builds the filter without loading it and returns libseccomp's PFC text of it (a
// readable listing of the BPF), for tests and debugging.
common::Result<std::string> seccompFilterText(const SandboxPolicy& policy);

}  // namespace scalws::sandbox
