// The kernel's own view of a process's sandbox: fields of /proc/<pid>/status.
//
// Used by applySandbox() to read back what it did (through a descriptor opened before
// Landlock, which would deny opening /proc afterwards), by tests on forked children and by
// the supervisor on its workers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "sandbox/sandbox_report.h"

namespace scalws::sandbox {

struct ProcessStatus {
  uid_t uid[4] = {};  // real, effective, saved, filesystem
  gid_t gid[4] = {};
  int threads = 0;
  bool noNewPrivs = false;
  int seccompMode = 0;  // 0 off, 1 strict, 2 filter
  uint64_t capEffective = 0;
  uint64_t capPermitted = 0;
};

// Parses the text of a status file; fails when a field it needs is missing.
common::Result<ProcessStatus> parseProcessStatus(std::string_view text);

// Reads and parses the status file open on `fd` from offset 0 (pread: the fd may be read
// again later, and procfs regenerates the text on each read from the start).
common::Result<ProcessStatus> readProcessStatus(int fd);

// Opens and reads /proc/<pid>/status; pid 0 means /proc/self/status.
common::Result<ProcessStatus> readProcessStatusOf(pid_t pid);

// Checks that the status shows what the report claims is in force: NoNewPrivs when set,
// Seccomp 2 when seccomp is enforced, every uid and gid the report's, and no capability
// left when the uid is not 0.
common::Status checkProcessStatus(const ProcessStatus& status, const SandboxReport& report);

}  // namespace scalws::sandbox
