#include "ipc/peer_credentials.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "ipc/unix_socket.h"

namespace scalws::ipc {
namespace {

constexpr gid_t kAdmin = 990;

PeerIdentity identity(uid_t uid, gid_t gid, std::vector<gid_t> groups = {}) {
  return PeerIdentity{PeerCredentials{1234, uid, gid}, std::move(groups)};
}

TEST(PeerCredentialsTest, SocketPairReportsThisProcess) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  auto creds = peerCredentials(pair->second.get());
  ASSERT_TRUE(creds.ok()) << creds.status().message();
  EXPECT_EQ(creds->pid, ::getpid());
  EXPECT_EQ(creds->uid, ::getuid());
  EXPECT_EQ(creds->gid, ::getgid());
}

TEST(PeerCredentialsTest, IdentifyPeerAddsTheUsersGroups) {
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  auto peer = identifyPeer(pair->first.get());
  ASSERT_TRUE(peer.ok()) << peer.status().message();
  EXPECT_EQ(peer->creds.uid, ::getuid());
  // getgrouplist always lists the primary group it was given (for a uid with a passwd
  // entry; this test runs as a user that has one).
  EXPECT_NE(std::find(peer->groups.begin(), peer->groups.end(), ::getgid()), peer->groups.end());
}

TEST(PeerCredentialsTest, NotASocketIsAnError) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_FALSE(peerCredentials(fds[0]).ok());
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(PeerCredentialsTest, LookupGroup) {
  auto root = lookupGroup("root");
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(*root, 0u);
  EXPECT_FALSE(lookupGroup("scalws-no-such-group-xyz").has_value());
}

TEST(PeerCredentialsTest, ReadsAreForEveryone) {
  EXPECT_TRUE(mayCall(Access::kRead, identity(1000, 1000), kAdmin));
  EXPECT_TRUE(mayCall(Access::kRead, identity(65534, 65534), std::nullopt));
}

TEST(PeerCredentialsTest, RootMayWrite) {
  EXPECT_TRUE(mayCall(Access::kWrite, identity(0, 0), kAdmin));
  EXPECT_TRUE(mayCall(Access::kWrite, identity(0, 1000), std::nullopt));
}

TEST(PeerCredentialsTest, AdminGroupMayWriteByPrimaryOrSupplementaryGroup) {
  EXPECT_TRUE(mayCall(Access::kWrite, identity(1000, kAdmin), kAdmin));
  EXPECT_TRUE(mayCall(Access::kWrite, identity(1000, 1000, {1000, 27, kAdmin}), kAdmin));
}

TEST(PeerCredentialsTest, OthersMayNotWrite) {
  EXPECT_FALSE(mayCall(Access::kWrite, identity(1000, 1000, {1000, 27}), kAdmin));
  EXPECT_FALSE(mayCall(Access::kWrite, identity(65534, 65534), kAdmin));
  // Without a scalws group, only root writes, whatever groups the peer has.
  EXPECT_FALSE(mayCall(Access::kWrite, identity(1000, kAdmin, {kAdmin}), std::nullopt));
}

}  // namespace
}  // namespace scalws::ipc
