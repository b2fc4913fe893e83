#include "ipc/peer_credentials.h"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace scalws::ipc {
namespace {

using common::Result;

// Buffer size for the *_r lookups; grows on ERANGE (big groups list many members).
size_t initialLookupBuffer() {
  long size = ::sysconf(_SC_GETGR_R_SIZE_MAX);
  return size > 0 ? static_cast<size_t>(size) : 16384;
}

std::vector<gid_t> groupsOfUid(uid_t uid, gid_t primary) {
  std::vector<char> buffer(initialLookupBuffer());
  passwd entry;
  passwd* found = nullptr;
  int rc;
  while ((rc = ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found)) == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  if (rc != 0 || found == nullptr) return {};
  std::vector<gid_t> groups(32);
  for (;;) {
    int count = static_cast<int>(groups.size());
    if (::getgrouplist(entry.pw_name, primary, groups.data(), &count) >= 0) {
      groups.resize(static_cast<size_t>(count));
      return groups;
    }
    // -1 means "too small"; count now holds the size needed.
    groups.resize(std::max(static_cast<size_t>(count), groups.size() * 2));
  }
}

}  // namespace

Result<PeerCredentials> peerCredentials(int sock) {
  ucred cred{};
  socklen_t length = sizeof(cred);
  if (::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
    return common::errnoStatus(errno, "ipc: getsockopt(SO_PEERCRED)");
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

Result<PeerIdentity> identifyPeer(int sock) {
  auto creds = peerCredentials(sock);
  if (!creds.ok()) return creds.status();
  return PeerIdentity{*creds, groupsOfUid(creds->uid, creds->gid)};
}

std::optional<gid_t> lookupGroup(std::string_view name) {
  std::string key(name);
  std::vector<char> buffer(initialLookupBuffer());
  group entry;
  group* found = nullptr;
  int rc;
  while ((rc = ::getgrnam_r(key.c_str(), &entry, buffer.data(), buffer.size(), &found)) == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  if (rc != 0 || found == nullptr) return std::nullopt;
  return entry.gr_gid;
}

bool mayCall(Access access, const PeerIdentity& peer, std::optional<gid_t> admin_gid) {
  if (access == Access::kRead) return true;
  if (peer.creds.uid == 0) return true;
  if (!admin_gid) return false;
  return peer.creds.gid == *admin_gid ||
         std::find(peer.groups.begin(), peer.groups.end(), *admin_gid) != peer.groups.end();
}

}  // namespace scalws::ipc
