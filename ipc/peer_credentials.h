// Who is on the other end of a Unix socket, and whether they may change state.
//
// Rule: root and members of group `scalws` may call write ops; everyone else
// may call read ops only. Membership counts the peer's primary gid (from SO_PEERCRED) and
// the supplementary groups of the passwd entry of its uid (getgrouplist), because
// SO_PEERCRED does not carry supplementary groups.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ipc/ops.h"

namespace scalws::ipc {

inline constexpr std::string_view kAdminGroup = "scalws";

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct PeerIdentity {
  PeerCredentials creds;
  std::vector<gid_t> groups;  // supplementary groups of creds.uid's passwd entry
};

// SO_PEERCRED: the credentials the peer had when it connected (or called socketpair).
common::Result<PeerCredentials> peerCredentials(int sock);

// peerCredentials plus the uid's groups. A uid without a passwd entry has no groups
// beyond creds.gid; that is not an error.
common::Result<PeerIdentity> identifyPeer(int sock);

// The gid of a group name, or nullopt when the group does not exist.
std::optional<gid_t> lookupGroup(std::string_view name);

// The decision, pure: reads always; writes for uid 0 or when admin_gid (the scalws group,
// nullopt when it does not exist) is the primary gid or among the groups.
bool mayCall(Access access, const PeerIdentity& peer, std::optional<gid_t> admin_gid);

}  // namespace scalws::ipc
