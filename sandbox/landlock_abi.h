// The Landlock user-space ABI, versions 1 to 7, declared here for ScalWS.
//
// Debian 12's linux-libc-dev (6.1) knows Landlock only up to ABI 2, while the kernels
// ScalWS runs on speak ABI 7. The constants and structs below follow the kernel's uapi
// header (include/uapi/linux/landlock.h); each block names the ABI and the kernel release
// that introduced it. Nothing here is used without first probing the running kernel's ABI
// (LANDLOCK_CREATE_RULESET_VERSION); a flag the kernel does not know makes it fail EINVAL.
//
// Everything lives in scalws::sandbox::landlock_abi so it never clashes with a newer system
// header that defines the same names as macros (the values are the kernel's, not ours).
#pragma once

#include <cstddef>
#include <cstdint>

namespace scalws::sandbox::landlock_abi {

// The system call numbers (5.13) come from glibc's <sys/syscall.h>, which knows them.

// landlock_create_ruleset() flags.
inline constexpr uint32_t kCreateRulesetVersion = 1U << 0;  // ABI 1 (5.13): ask the ABI
inline constexpr uint32_t kCreateRulesetErrata = 1U << 1;   // ABI 7 (6.15): ask the errata

// Rule types for landlock_add_rule().
inline constexpr int kRulePathBeneath = 1;  // ABI 1 (5.13)
inline constexpr int kRuleNetPort = 2;      // ABI 4 (6.7)

// --- Filesystem access rights. ---
// ABI 1 (5.13)
inline constexpr uint64_t kFsExecute = 1ULL << 0;
inline constexpr uint64_t kFsWriteFile = 1ULL << 1;
inline constexpr uint64_t kFsReadFile = 1ULL << 2;
inline constexpr uint64_t kFsReadDir = 1ULL << 3;
inline constexpr uint64_t kFsRemoveDir = 1ULL << 4;
inline constexpr uint64_t kFsRemoveFile = 1ULL << 5;
inline constexpr uint64_t kFsMakeChar = 1ULL << 6;
inline constexpr uint64_t kFsMakeDir = 1ULL << 7;
inline constexpr uint64_t kFsMakeReg = 1ULL << 8;
inline constexpr uint64_t kFsMakeSock = 1ULL << 9;
inline constexpr uint64_t kFsMakeFifo = 1ULL << 10;
inline constexpr uint64_t kFsMakeBlock = 1ULL << 11;
inline constexpr uint64_t kFsMakeSym = 1ULL << 12;
// ABI 2 (5.19): link or rename across directories.
inline constexpr uint64_t kFsRefer = 1ULL << 13;
// ABI 3 (6.2): truncate(2), ftruncate(2) and open(O_TRUNC).
inline constexpr uint64_t kFsTruncate = 1ULL << 14;
// ABI 5 (6.10): ioctl(2) on character and block devices opened after the sandbox.
inline constexpr uint64_t kFsIoctlDev = 1ULL << 15;

// The rights a rule on a regular file (rather than a directory) may carry; the kernel
// refuses directory-only rights on a file with EINVAL.
inline constexpr uint64_t kFsFileRights =
    kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;

// --- Network access rights: ABI 4 (6.7), TCP only. ---
inline constexpr uint64_t kNetBindTcp = 1ULL << 0;
inline constexpr uint64_t kNetConnectTcp = 1ULL << 1;

// --- Scopes: ABI 6 (6.12). ---
// Connecting to an abstract unix socket created outside the domain.
inline constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
// Sending a signal to a process outside the domain.
inline constexpr uint64_t kScopeSignal = 1ULL << 1;

// --- landlock_restrict_self() flags: ABI 7 (6.15), audit logging of denials. ---
inline constexpr uint32_t kRestrictSelfLogSameExecOff = 1U << 0;
inline constexpr uint32_t kRestrictSelfLogNewExecOn = 1U << 1;
inline constexpr uint32_t kRestrictSelfLogSubdomainsOff = 1U << 2;

// struct landlock_ruleset_attr. ABI 1-3 read only handled_access_fs; ABI 4 (6.7) added
// handled_access_net; ABI 6 (6.12) added scoped. Pass rulesetAttrSize(abi) as the size so
// an older kernel is never handed fields it does not know.
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;  // ABI 4
  uint64_t scoped = 0;              // ABI 6
};
static_assert(sizeof(RulesetAttr) == 24);

inline constexpr size_t rulesetAttrSize(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

// struct landlock_path_beneath_attr (ABI 1), packed in the kernel's uapi.
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};
static_assert(sizeof(PathBeneathAttr) == 12);

// struct landlock_net_port_attr (ABI 4, 6.7); port is in host byte order.
struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};
static_assert(sizeof(NetPortAttr) == 16);

}  // namespace scalws::sandbox::landlock_abi
