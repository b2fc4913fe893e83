// SandboxPolicy: what a worker may still do once it serves, as a plain value.
//
// The policy is built once at start-up from plain inputs (SandboxInputs), never from the
// config model directly, so sandbox/ does not depend on how a site is configured: the
// caller maps its config (docroots, cache dirs, upstream and PHP ports, user) onto the
// inputs. Building resolves the user and its groups (getpwnam_r, getgrouplist) and checks
// the inputs; it touches no kernel sandbox facility, so it is testable anywhere.
// applySandbox() (sandbox.h) is what enforces a policy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace scalws::sandbox {

// off: no Landlock, no seccomp (the privilege drop still happens when a user is set).
// on: everything the kernel offers; what it lacks is reported and logged, not fatal.
// required: refuse to start when the kernel lacks Landlock or its TCP rules (ABI < 4).
enum class SandboxMode { kOff, kOn, kRequired };

// What a syscall outside the seccomp allow-list does: fail with EPERM (and be logged by
// the kernel's audit), or kill the whole process with SIGSYS.
enum class SeccompAction { kErrno, kKill };

// Which seccomp allow-list the process loads: a worker's (seccomp_allow_list.h) or the
// much smaller one of a shared address's front (seccomp_front_list.h), which opens no file
// and no socket of its own.
enum class SeccompProfile { kWorker, kFront };

enum class PathAccess {
  kReadOnly,   // read files, list directories; never write, truncate or execute
  kReadWrite,  // directories: create, write, truncate, rename, remove beneath;
               // files: write (append) only — a log file is never truncated or read back
  // The rights below serve the sandbox of an app the controller runs (exec_sandbox.h).
  kReadExecute,  // a runtime (/usr): read, list and execute beneath; never write
  kSockets,      // a socket directory: list, create unix sockets and remove files beneath
  kDevice,       // a character device such as /dev/null: read and write, no ioctl
};

// What the path must be when the sandbox is applied; a mismatch is an error, because it
// means the config and the filesystem disagree about what the path is.
enum class PathKind { kDirectory, kFile, kAny };

struct PathRule {
  std::string path;  // absolute, without a trailing '/'
  PathAccess access = PathAccess::kReadOnly;
  PathKind kind = PathKind::kAny;

  bool operator==(const PathRule&) const = default;
};

// The user the worker runs as after the drop.
struct Identity {
  std::string user;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, as getgrouplist() gives them

  bool operator==(const Identity&) const = default;
};

struct SandboxPolicy {
  SandboxMode mode = SandboxMode::kOn;
  std::optional<Identity> identity;  // nullopt: keep the current uid/gid/groups
  bool allowRoot = false;            // the identity may be uid 0 or gid 0
  std::vector<PathRule> paths;
  std::vector<uint16_t> tcpConnectPorts;  // sorted, unique, never 0
  bool unixConnect = false;               // socket(AF_UNIX) allowed (PHP-FPM on a unix socket)
  bool udpDatagrams = false;              // recvmmsg allowed (HTTP/3 on inherited UDP sockets)
  SeccompAction seccompAction = SeccompAction::kErrno;
  SeccompProfile seccompProfile = SeccompProfile::kWorker;
};

// Plain inputs for buildSandboxPolicy(); every path must be absolute.
struct SandboxInputs {
  std::string user;  // empty: keep the current identity
  bool allowRoot = false;
  std::vector<std::string> docroots;        // read-only directories
  std::vector<std::string> writableDirs;    // cache and temp directories
  std::vector<std::string> logFiles;        // opened for append
  std::vector<std::string> extraReadPaths;  // files or directories (mime.types, certs dir)
  std::vector<uint16_t> tcpConnectPorts;    // upstream and PHP-FPM TCP ports
  bool unixConnect = false;                 // a PHP pool or upstream on a unix socket
  bool udpDatagrams = false;                // HTTP/3 listeners: batched datagram receives
  SandboxMode mode = SandboxMode::kOn;
  SeccompAction seccompAction = SeccompAction::kErrno;
  SeccompProfile seccompProfile = SeccompProfile::kWorker;
};

// Resolves the user and its groups, checks and normalises paths and ports. Refuses uid 0
// or gid 0 unless allowRoot, relative or empty paths, and port 0.
common::Result<SandboxPolicy> buildSandboxPolicy(const SandboxInputs& inputs);

// The user's uid, primary gid and supplementary groups (getpwnam_r + getgrouplist).
common::Result<Identity> resolveIdentity(std::string_view user);

// "off" | "on" | "required" (and the TOML booleans' spellings "false" | "true").
common::Result<SandboxMode> parseSandboxMode(std::string_view text);
std::string_view sandboxModeName(SandboxMode mode);
// "errno" | "kill"
common::Result<SeccompAction> parseSeccompAction(std::string_view text);
std::string_view seccompActionName(SeccompAction action);
std::string_view seccompProfileName(SeccompProfile profile);  // "worker" | "front"
std::string_view pathAccessName(PathAccess access);
std::string_view pathKindName(PathKind kind);

}  // namespace scalws::sandbox
