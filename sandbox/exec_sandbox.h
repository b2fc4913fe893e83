// ExecSandbox: the sandbox of a program the controller starts and does not control (an app:
// a Node.js or Python server), prepared in the parent and entered by the child between fork
// and exec, so it holds from the program's first instruction.
//
// prepare() runs in the parent and may allocate: it probes the Landlock ABI, creates the
// ruleset and adds its path rules (each path opened with the parent's privileges) and TCP
// connect ports, and compiles the seccomp deny-list (seccomp_deny_list.h) to BPF. report()
// says what a child enters: the identity, each Landlock rule, the deny-list, and in
// `degraded` what this kernel cannot enforce.
//
// enter() runs in the child and is async-signal-safe (system calls only, no allocation):
// setgroups → setresgid → setresuid (then proves setuid(0) fails) → PR_SET_NO_NEW_PRIVS →
// landlock_restrict_self → the seccomp filter. Everything it enters survives execve. It
// returns the step that failed, with errno set, or Step::kNone.
//
// Unlike the worker's sandbox (sandbox.h), nothing here is an allow-list of system calls:
// the program is someone else's. Its limits are the user it runs as, the paths and ports
// Landlock grants, and the deny-list.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace scalws::sandbox {

struct ExecSandboxSpec {
  Identity identity;  // never uid 0 or gid 0
  std::vector<PathRule> paths;
  std::vector<uint16_t> tcpConnectPorts;  // every TCP bind is denied
};

class ExecSandbox {
 public:
  enum class Step {
    kNone,
    kGroups,
    kGid,
    kUid,
    kStillPrivileged,
    kNoNewPrivs,
    kLandlock,
    kSeccomp
  };

  static common::Result<ExecSandbox> prepare(const ExecSandboxSpec& spec);

  Step enter() const noexcept;
  static std::string_view stepName(Step step);

  // What a child enters (identity, Landlock, seccomp); `verified` stays false: the caller
  // checks a running child against it (checkProcessStatus of process_status.h).
  const SandboxReport& report() const { return report_; }

 private:
  ExecSandbox() = default;

  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::vector<gid_t> groups_;
  std::optional<LandlockRuleset> ruleset_;
  std::vector<sock_filter> seccomp_;
  SandboxReport report_;
};

// Compiles the deny-list; fills report.seccomp (without `enforced`). Exposed for tests.
common::Result<std::vector<sock_filter>> compileSeccompDenyList(SeccompReport& report);

}  // namespace scalws::sandbox
