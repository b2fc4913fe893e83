#include "sandbox/sandbox_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace scalws::sandbox {
namespace {

using common::StatusCode;

SandboxInputs siteInputs() {
  SandboxInputs in;
  in.user = "nobody";
  in.docroots = {"/srv/www", "/srv/other/"};
  in.writableDirs = {"/var/cache/scalws//site"};
  in.logFiles = {"/var/log/scalws/access.log"};
  in.extraReadPaths = {"/etc/mime.types"};
  in.tcpConnectPorts = {9001, 9000, 9001};
  in.mode = SandboxMode::kRequired;
  in.seccompAction = SeccompAction::kKill;
  in.unixConnect = true;
  return in;
}

TEST(SandboxPolicyTest, BuildsPathsByCategoryWithTheirAccessAndKind) {
  auto policy = buildSandboxPolicy(siteInputs());
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  std::vector<PathRule> expected = {
      {"/srv/www", PathAccess::kReadOnly, PathKind::kDirectory},
      {"/srv/other", PathAccess::kReadOnly, PathKind::kDirectory},
      {"/etc/mime.types", PathAccess::kReadOnly, PathKind::kAny},
      {"/var/cache/scalws/site", PathAccess::kReadWrite, PathKind::kDirectory},
      {"/var/log/scalws/access.log", PathAccess::kReadWrite, PathKind::kFile},
  };
  EXPECT_EQ(policy->paths, expected);
  EXPECT_EQ(policy->mode, SandboxMode::kRequired);
  EXPECT_EQ(policy->seccompAction, SeccompAction::kKill);
  EXPECT_TRUE(policy->unixConnect);
  EXPECT_FALSE(policy->allowRoot);
}

TEST(SandboxPolicyTest, PortsAreSortedAndUnique) {
  auto policy = buildSandboxPolicy(siteInputs());
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->tcpConnectPorts, (std::vector<uint16_t>{9000, 9001}));
}

TEST(SandboxPolicyTest, PortZeroIsRefused) {
  SandboxInputs in = siteInputs();
  in.tcpConnectPorts.push_back(0);
  auto policy = buildSandboxPolicy(in);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
}

TEST(SandboxPolicyTest, ResolvesNobodyWithItsGroups) {
  auto policy = buildSandboxPolicy(siteInputs());
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  ASSERT_TRUE(policy->identity.has_value());
  EXPECT_EQ(policy->identity->user, "nobody");
  EXPECT_EQ(policy->identity->uid, 65534u);
  EXPECT_EQ(policy->identity->gid, 65534u);
  // getgrouplist() always includes the primary group.
  const auto& groups = policy->identity->groups;
  EXPECT_NE(std::find(groups.begin(), groups.end(), 65534u), groups.end());
  EXPECT_TRUE(std::is_sorted(groups.begin(), groups.end()));
}

TEST(SandboxPolicyTest, EmptyUserKeepsTheCurrentIdentity) {
  SandboxInputs in = siteInputs();
  in.user.clear();
  auto policy = buildSandboxPolicy(in);
  ASSERT_TRUE(policy.ok());
  EXPECT_FALSE(policy->identity.has_value());
}

TEST(SandboxPolicyTest, UnknownUserIsNotFound) {
  SandboxInputs in = siteInputs();
  in.user = "scalws-no-such-user-x";
  auto policy = buildSandboxPolicy(in);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().code(), StatusCode::kNotFound);
  EXPECT_NE(policy.status().message().find("scalws-no-such-user-x"), std::string::npos);
}

TEST(SandboxPolicyTest, RootIsRefusedUnlessAllowedExplicitly) {
  SandboxInputs in = siteInputs();
  in.user = "root";
  auto refused = buildSandboxPolicy(in);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);

  in.allowRoot = true;
  auto allowed = buildSandboxPolicy(in);
  ASSERT_TRUE(allowed.ok()) << allowed.status().message();
  EXPECT_EQ(allowed->identity->uid, 0u);
  EXPECT_TRUE(allowed->allowRoot);
}

TEST(SandboxPolicyTest, PathsAreNormalised) {
  SandboxInputs in;
  in.docroots = {"/srv//www///", "/", "/srv/www"};
  auto policy = buildSandboxPolicy(in);
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  ASSERT_EQ(policy->paths.size(), 2u);  // the duplicate collapses
  EXPECT_EQ(policy->paths[0].path, "/srv/www");
  EXPECT_EQ(policy->paths[1].path, "/");
}

TEST(SandboxPolicyTest, RelativeEmptyAndDotDotPathsAreRefused) {
  for (const char* bad : {"srv/www", "", "/srv/../etc", "/srv/./www", "./x"}) {
    SandboxInputs in;
    in.writableDirs = {bad};
    auto policy = buildSandboxPolicy(in);
    ASSERT_FALSE(policy.ok()) << "accepted \"" << bad << "\"";
    EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(policy.status().message().find("writable directory"), std::string::npos);
  }
}

TEST(SandboxPolicyTest, ModeAndActionNamesRoundTrip) {
  for (SandboxMode m : {SandboxMode::kOff, SandboxMode::kOn, SandboxMode::kRequired}) {
    auto parsed = parseSandboxMode(sandboxModeName(m));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, m);
  }
  EXPECT_EQ(*parseSandboxMode("true"), SandboxMode::kOn);
  EXPECT_EQ(*parseSandboxMode("false"), SandboxMode::kOff);
  EXPECT_FALSE(parseSandboxMode("maybe").ok());
  for (SeccompAction a : {SeccompAction::kErrno, SeccompAction::kKill}) {
    auto parsed = parseSeccompAction(seccompActionName(a));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, a);
  }
  EXPECT_FALSE(parseSeccompAction("trap").ok());
}

}  // namespace
}  // namespace scalws::sandbox
