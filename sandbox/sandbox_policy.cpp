#include "sandbox/sandbox_policy.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace scalws::sandbox {
namespace {

using common::Result;
using common::Status;

// Checks that `path` is absolute and free of "." and ".." components, and returns it with
// repeated and trailing slashes removed. Lexical clean-up only: symlinks are resolved by
// the kernel when the rule is added, which is what Landlock enforces anyway.
Result<std::string> normalisePath(std::string_view path, std::string_view what) {
  if (path.empty() || path.front() != '/') {
    return common::invalidArgument(std::string(what) + " \"" + std::string(path) +
                                   "\" must be an absolute path");
  }
  std::string out;
  size_t pos = 0;
  while (pos < path.size()) {
    while (pos < path.size() && path[pos] == '/') ++pos;
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(pos, end - pos);
    if (part == "." || part == "..") {
      return common::invalidArgument(std::string(what) + " \"" + std::string(path) +
                                     "\" must not contain \".\" or \"..\"");
    }
    if (!part.empty()) {
      out += '/';
      out += part;
    }
    pos = end;
  }
  // push_back, not `out = "/"`: GCC 12 at -O3 reports a false -Wrestrict on that
  // assignment (GCC bug 105329).
  if (out.empty()) out.push_back('/');
  return out;
}

Status addPaths(const std::vector<std::string>& paths, PathAccess access, PathKind kind,
                std::string_view what, std::vector<PathRule>& rules) {
  for (const std::string& raw : paths) {
    Result<std::string> path = normalisePath(raw, what);
    if (!path.ok()) return path.status();
    PathRule rule{std::move(path).value(), access, kind};
    if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
  }
  return common::okStatus();
}

}  // namespace

Result<Identity> resolveIdentity(std::string_view user) {
  std::string name(user);
  long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 4096);
  passwd pw;
  passwd* found = nullptr;
  int err;
  while ((err = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found)) == ERANGE) {
    buf.resize(buf.size() * 2);
  }
  if (err != 0) return common::errnoStatus(err, "looking up user \"" + name + "\"");
  if (found == nullptr) {
    return Status(common::StatusCode::kNotFound, "user \"" + name + "\" does not exist");
  }
  Identity id{name, pw.pw_uid, pw.pw_gid, {}};

  // getgrouplist() says how many groups there are when the buffer is too small.
  int count = 16;
  std::vector<gid_t> groups(static_cast<size_t>(count));
  while (getgrouplist(name.c_str(), pw.pw_gid, groups.data(), &count) == -1) {
    if (count <= static_cast<int>(groups.size())) count = static_cast<int>(groups.size()) * 2;
    groups.resize(static_cast<size_t>(count));
  }
  groups.resize(static_cast<size_t>(count));
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  id.groups = std::move(groups);
  return id;
}

Result<SandboxPolicy> buildSandboxPolicy(const SandboxInputs& in) {
  SandboxPolicy policy;
  policy.mode = in.mode;
  policy.allowRoot = in.allowRoot;
  policy.unixConnect = in.unixConnect;
  policy.udpDatagrams = in.udpDatagrams;
  policy.seccompAction = in.seccompAction;
  policy.seccompProfile = in.seccompProfile;

  if (!in.user.empty()) {
    Result<Identity> id = resolveIdentity(in.user);
    if (!id.ok()) return id.status();
    if ((id->uid == 0 || id->gid == 0) && !in.allowRoot) {
      return common::invalidArgument("refusing to run workers as \"" + in.user + "\" (uid " +
                                     std::to_string(id->uid) + ", gid " + std::to_string(id->gid) +
                                     "): root must be allowed explicitly");
    }
    policy.identity = std::move(id).value();
  }

  SCALWS_RETURN_IF_ERROR(
      addPaths(in.docroots, PathAccess::kReadOnly, PathKind::kDirectory, "docroot", policy.paths));
  SCALWS_RETURN_IF_ERROR(addPaths(in.extraReadPaths, PathAccess::kReadOnly, PathKind::kAny,
                                  "read-only path", policy.paths));
  SCALWS_RETURN_IF_ERROR(addPaths(in.writableDirs, PathAccess::kReadWrite, PathKind::kDirectory,
                                  "writable directory", policy.paths));
  SCALWS_RETURN_IF_ERROR(
      addPaths(in.logFiles, PathAccess::kReadWrite, PathKind::kFile, "log file", policy.paths));

  for (uint16_t port : in.tcpConnectPorts) {
    if (port == 0) return common::invalidArgument("TCP connect port 0 is not a port");
    policy.tcpConnectPorts.push_back(port);
  }
  std::sort(policy.tcpConnectPorts.begin(), policy.tcpConnectPorts.end());
  policy.tcpConnectPorts.erase(
      std::unique(policy.tcpConnectPorts.begin(), policy.tcpConnectPorts.end()),
      policy.tcpConnectPorts.end());
  return policy;
}

Result<SandboxMode> parseSandboxMode(std::string_view text) {
  if (text == "off" || text == "false") return SandboxMode::kOff;
  if (text == "on" || text == "true") return SandboxMode::kOn;
  if (text == "required") return SandboxMode::kRequired;
  return common::invalidArgument("unknown sandbox mode \"" + std::string(text) +
                                 "\" (expected off, on or required)");
}

std::string_view sandboxModeName(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kOff:
      return "off";
    case SandboxMode::kOn:
      return "on";
    case SandboxMode::kRequired:
      return "required";
  }
  return "?";
}

Result<SeccompAction> parseSeccompAction(std::string_view text) {
  if (text == "errno") return SeccompAction::kErrno;
  if (text == "kill") return SeccompAction::kKill;
  return common::invalidArgument("unknown seccomp action \"" + std::string(text) +
                                 "\" (expected errno or kill)");
}

std::string_view seccompActionName(SeccompAction action) {
  return action == SeccompAction::kKill ? "kill" : "errno";
}

std::string_view seccompProfileName(SeccompProfile profile) {
  return profile == SeccompProfile::kFront ? "front" : "worker";
}

std::string_view pathAccessName(PathAccess access) {
  switch (access) {
    case PathAccess::kReadOnly:
      return "read-only";
    case PathAccess::kReadWrite:
      return "read-write";
    case PathAccess::kReadExecute:
      return "read-execute";
    case PathAccess::kSockets:
      return "sockets";
    case PathAccess::kDevice:
      return "device";
  }
  return "?";
}

std::string_view pathKindName(PathKind kind) {
  switch (kind) {
    case PathKind::kDirectory:
      return "directory";
    case PathKind::kFile:
      return "file";
    case PathKind::kAny:
      return "any";
  }
  return "?";
}

}  // namespace scalws::sandbox
