// SandboxReport: what applySandbox() put in force, for logs, `scalwsd --sandbox-report`
// and `scalwsctl instance show`.
//
// A report is a plain value filled in layer by layer while the sandbox is applied; it says
// what the kernel enforces now (not what was asked for) and lists, in `degraded`, every part
// of the policy the kernel could not enforce. Rendering allocates; do it before or outside
// the hot path.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sandbox/sandbox_policy.h"

namespace scalws::sandbox {

struct IdentityReport {
  bool changed = false;  // setgroups/setgid/setuid ran
  std::string user;      // empty when the identity was kept
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

struct LandlockPathReport {
  std::string path;
  PathAccess access = PathAccess::kReadOnly;
  bool directory = false;  // what the path was when the rule was added
  uint64_t rights = 0;     // LANDLOCK_ACCESS_FS_* granted beneath it
};

struct LandlockReport {
  int abi = 0;  // 0: the kernel has no (enabled) Landlock
  bool enforced = false;
  uint64_t handledFs = 0;   // denied unless a path rule grants it
  uint64_t handledNet = 0;  // ABI >= 4: BIND_TCP | CONNECT_TCP
  uint64_t scoped = 0;      // ABI >= 6
  std::vector<LandlockPathReport> paths;
  std::vector<uint16_t> tcpConnectPorts;  // ports with a CONNECT_TCP rule
};

struct SeccompReport {
  bool enforced = false;
  SeccompAction action = SeccompAction::kErrno;
  size_t allowedSyscalls = 0;  // distinct syscalls with at least one allow rule
  size_t rules = 0;            // list entries loaded (argument variants count)
  // An app's filter (exec_sandbox.h) is a deny-list: everything but deniedSyscalls passes.
  bool denyList = false;
  size_t deniedSyscalls = 0;
  std::vector<std::string> notOnThisArch;            // table names this architecture lacks
  bool udpDatagrams = false;                         // HTTP/3's recvmmsg is in the filter
  SeccompProfile profile = SeccompProfile::kWorker;  // whose allow-list
};

struct SandboxReport {
  SandboxMode mode = SandboxMode::kOn;
  IdentityReport identity;
  bool noNewPrivs = false;
  LandlockReport landlock;
  SeccompReport seccomp;
  // One sentence per part of the policy that is not enforced, e.g. "TCP bind/connect
  // rules need Landlock ABI 4 (Linux 6.7); the kernel has ABI 3".
  std::vector<std::string> degraded;
  // /proc/self/status was read back after applying and agreed (NoNewPrivs, Seccomp, uid).
  bool verified = false;

  // Human-readable lines, one fact per line, without trailing newlines.
  std::vector<std::string> toLines() const;
  nlohmann::json toJson() const;
};

// Names of Landlock rights and scopes, in bit order ("read_file", "connect_tcp", "signal").
std::vector<std::string> landlockFsRightNames(uint64_t rights);
std::vector<std::string> landlockNetRightNames(uint64_t rights);
std::vector<std::string> landlockScopeNames(uint64_t scopes);

}  // namespace scalws::sandbox
