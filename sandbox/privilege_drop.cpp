#include "sandbox/privilege_drop.h"

#include <grp.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace scalws::sandbox {
namespace {

using common::Result;
using common::Status;

std::vector<gid_t> currentGroups() {
  int n = getgroups(0, nullptr);
  std::vector<gid_t> groups(n > 0 ? static_cast<size_t>(n) : 0);
  if (n > 0) {
    n = getgroups(n, groups.data());
    groups.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

IdentityReport currentIdentity() {
  IdentityReport r;
  r.uid = geteuid();
  r.gid = getegid();
  r.groups = currentGroups();
  return r;
}

bool allIdsAre(uid_t uid, gid_t gid) {
  uid_t ru, eu, su;
  gid_t rg, eg, sg;
  if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0) return false;
  return ru == uid && eu == uid && su == uid && rg == gid && eg == gid && sg == gid;
}

// The permitted and effective capability sets, as capget(2) reports them.
Result<uint64_t> remainingCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return common::errnoStatus(errno, "capget");
  uint64_t permitted = data[0].permitted | (static_cast<uint64_t>(data[1].permitted) << 32);
  uint64_t effective = data[0].effective | (static_cast<uint64_t>(data[1].effective) << 32);
  return permitted | effective;
}

// Proves that the process cannot become root again. Each probe would succeed if any of
// the saved ids or a capability had been kept.
Status verifyNoWayBack(const Identity& id) {
  if (!allIdsAre(id.uid, id.gid)) {
    return common::internalError("privilege drop to \"" + id.user +
                                 "\" left a real, effective or saved id behind");
  }
  if (id.uid == 0) return common::okStatus();  // explicitly allowed root: nothing to prove
  if (setuid(0) == 0) {
    return common::internalError("privilege drop to \"" + id.user + "\" can be undone: setuid(0)");
  }
  if (id.gid != 0 && setgid(0) == 0) {
    return common::internalError("privilege drop to \"" + id.user + "\" can be undone: setgid(0)");
  }
  gid_t root = 0;
  if (setgroups(1, &root) == 0) {
    return common::internalError("privilege drop to \"" + id.user +
                                 "\" can be undone: setgroups()");
  }
  Result<uint64_t> caps = remainingCapabilities();
  if (!caps.ok()) return caps.status();
  if (*caps != 0) {
    return common::internalError("privilege drop to \"" + id.user + "\" kept capabilities (mask " +
                                 std::to_string(*caps) + ")");
  }
  return common::okStatus();
}

}  // namespace

Result<IdentityReport> dropPrivileges(const SandboxPolicy& policy) {
  if (!policy.identity) {
    if (geteuid() == 0 && !policy.allowRoot) {
      return Status(common::StatusCode::kPermissionDenied,
                    "refusing to keep running as root: set a user or allow root explicitly");
    }
    return currentIdentity();
  }
  const Identity& id = *policy.identity;
  if ((id.uid == 0 || id.gid == 0) && !policy.allowRoot) {
    return Status(common::StatusCode::kPermissionDenied,
                  "refusing to drop privileges to \"" + id.user +
                      "\" (uid 0 or gid 0): root must be allowed explicitly");
  }

  if (geteuid() != 0) {
    // Already unprivileged: fine only if we already are exactly the target.
    if (!allIdsAre(id.uid, id.gid)) {
      return Status(common::StatusCode::kPermissionDenied, "cannot switch to user \"" + id.user +
                                                               "\": not running as root (uid " +
                                                               std::to_string(geteuid()) + ")");
    }
    IdentityReport r = currentIdentity();
    r.user = id.user;
    return r;
  }

  // Groups first: they can only be set while still privileged.
  if (setgroups(id.groups.size(), id.groups.data()) != 0) {
    return common::errnoStatus(errno, "setgroups for user \"" + id.user + "\"");
  }
  if (setresgid(id.gid, id.gid, id.gid) != 0) {
    return common::errnoStatus(errno, "setresgid(" + std::to_string(id.gid) + ")");
  }
  if (setresuid(id.uid, id.uid, id.uid) != 0) {
    return common::errnoStatus(errno, "setresuid(" + std::to_string(id.uid) + ")");
  }
  SCALWS_RETURN_IF_ERROR(verifyNoWayBack(id));

  IdentityReport r = currentIdentity();
  r.changed = true;
  r.user = id.user;
  return r;
}

}  // namespace scalws::sandbox
