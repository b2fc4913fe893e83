// SandboxSummary: the sandbox a worker says it entered, as its `ready` message carries it
// (the `sandbox` field of ReadyArgs) and `scalwsctl instance show` prints it. It is the
// worker's word: the controller also reads what it can check itself in /proc (uids, gids,
// NoNewPrivs, Seccomp) and shows that beside it, as fact.
//
// The decoder is strict, because the sender may be hostile: every field must be there with
// its type, strings are at most kMaxText bytes and lists at most kMaxItems entries, and an
// error names the field. Names match sandbox::SandboxReport::toJson(); fields the
// controller has no use for are left out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ipc/message.h"

namespace scalws::ipc {

struct SandboxSummary {
  static constexpr size_t kMaxText = 4096;
  static constexpr size_t kMaxItems = 512;

  struct Path {
    std::string path;
    std::string access;  // "read_only", "read_write", ...
    friend bool operator==(const Path&, const Path&) = default;
  };

  std::string mode;  // "on", "off", "required"
  // identity
  bool identity_changed = false;
  std::string user;
  uint64_t uid = 0;
  uint64_t gid = 0;
  std::vector<uint64_t> groups;
  bool no_new_privs = false;
  // landlock
  uint64_t landlock_abi = 0;
  bool landlock_enforced = false;
  std::vector<Path> landlock_paths;
  std::vector<uint64_t> tcp_connect_ports;
  std::vector<std::string> landlock_scoped;
  // seccomp
  bool seccomp_enforced = false;
  std::string seccomp_action;
  uint64_t allowed_syscalls = 0;
  bool udp_datagrams = false;              // HTTP/3: datagrams on the inherited UDP sockets allowed
  std::string seccomp_profile = "worker";  // whose allow-list: "worker" or "front"
  std::vector<std::string> degraded;
  bool verified = false;  // it read its own /proc/self/status back and it agreed

  friend bool operator==(const SandboxSummary&, const SandboxSummary&) = default;

  Json encode() const;
  static common::Result<SandboxSummary> decode(const Json& j);
};

}  // namespace scalws::ipc
