// The seccomp deny-list of an app the controller runs (a Node.js or Python server): one
// table, one line per syscall (or per argument variant), each with the reason it is there.
//
// The worker's filter is an allow-list (seccomp_allow_list.h): it knows every call its own
// event loop makes. An app is someone else's program on someone else's runtime, so its
// filter is the other way round: everything is allowed except what no web application
// needs and what would reach past its Landlock domain or into the kernel's rarer corners
// (ptrace and process_vm_*, mounts and namespaces, bpf, kexec, modules, keyrings,
// perf_event_open, io_uring, userfaultfd). An entry with argument checks refuses the call
// only when all of its checks hold; entries with the same name are alternatives. A refused
// call fails with the entry's errno (EPERM, or ENOSYS where a library falls back).
#pragma once

#include <span>

#include "sandbox/seccomp_allow_list.h"

namespace scalws::sandbox {

struct SyscallDenial {
  const char* name;
  std::array<ArgCheck, 3> checks;  // all must hold for the call to be refused
  int error;                       // the errno the call fails with
  const char* why;
};

std::span<const SyscallDenial> seccompDenyList();

}  // namespace scalws::sandbox
