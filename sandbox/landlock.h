// Landlock: the filesystem, TCP and scope rules of the sandbox, at the best ABI the kernel
// speaks.
//
// The ruleset handles every filesystem right the running ABI knows, so anything not
// granted by a path rule is denied: read beneath read-only paths (never execute), write
// beneath the writable directories, append to log files. With ABI >= 4 TCP bind is denied
// outright and TCP connect is allowed only to the policy's ports; with ABI >= 6 abstract
// unix sockets and signals are scoped to the domain. What the kernel's ABI cannot enforce
// is listed as degraded; in SandboxMode::kRequired a kernel without Landlock or without
// ABI 4 is refused instead.
//
// Landlock restricts the calling thread and the threads and processes it creates after;
// threads that already exist stay unrestricted, so apply it before starting any.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace scalws::sandbox {

// The kernel's Landlock ABI version; 0 when Landlock is not built in or not enabled.
int probeLandlockAbi();

// What a policy becomes under a given ABI, computed without touching the kernel.
struct LandlockPlan {
  int abi = 0;
  uint64_t handledFs = 0;
  uint64_t handledNet = 0;
  uint64_t scoped = 0;
  std::vector<std::string> degraded;  // what this ABI cannot enforce
};

// Fails (FailedPrecondition) in kRequired mode when abi < 4.
common::Result<LandlockPlan> planLandlock(const SandboxPolicy& policy, int abi);

// Every filesystem right the given ABI knows.
uint64_t landlockFsRightsForAbi(int abi);

// The rights a path rule grants: by access, and by whether the path is a directory (a
// file may only carry file rights), limited to what the ruleset handles.
uint64_t landlockPathRights(PathAccess access, bool directory, uint64_t handledFs);

// Probes the ABI, builds the ruleset, sets PR_SET_NO_NEW_PRIVS and restricts the calling
// thread. Fills report.landlock and appends to report.degraded. A path that does not exist
// or is not of the policy's PathKind is an error. On error nothing was restricted unless
// the error says landlock_restrict_self failed.
// The ruleset is built in two steps so its paths are opened with the privileges the
// process starts with (a docroot or config file only root may traverse to) and enforced
// after the privilege drop: prepare → drop privileges → restrict.
class LandlockRuleset {
 public:
  LandlockRuleset() = default;
  ~LandlockRuleset();
  LandlockRuleset(LandlockRuleset&& other) noexcept;
  LandlockRuleset(const LandlockRuleset&) = delete;
  LandlockRuleset& operator=(const LandlockRuleset&) = delete;
  LandlockRuleset& operator=(LandlockRuleset&&) = delete;

  // landlock_restrict_self() on the calling thread, nothing else: 0 or the errno. No
  // allocation, so a child between fork and exec may call it (after PR_SET_NO_NEW_PRIVS);
  // 0 when the kernel has no Landlock (the preparation reported that as degraded).
  int restrictCurrentThread() const noexcept;

 private:
  friend common::Result<LandlockRuleset> prepareLandlock(const SandboxPolicy&, SandboxReport&);
  friend common::Status restrictLandlock(LandlockRuleset&, SandboxReport&);
  int fd_ = -1;  // -1: the kernel has no Landlock
  LandlockPlan plan_;
};

common::Result<LandlockRuleset> prepareLandlock(const SandboxPolicy& policy, SandboxReport& report);
// Sets PR_SET_NO_NEW_PRIVS and restricts the calling thread.
common::Status restrictLandlock(LandlockRuleset& ruleset, SandboxReport& report);
// Both steps at once (for a process that keeps its identity).
common::Status applyLandlock(const SandboxPolicy& policy, SandboxReport& report);

}  // namespace scalws::sandbox
