#include "sandbox/sandbox_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sandbox/landlock_abi.h"

namespace scalws::sandbox {
namespace {

namespace abi = landlock_abi;

SandboxReport exampleReport() {
  SandboxReport r;
  r.mode = SandboxMode::kRequired;
  r.identity = {true, "www-data", 33, 33, {33}};
  r.noNewPrivs = true;
  r.landlock.abi = 7;
  r.landlock.enforced = true;
  r.landlock.handledFs = abi::kFsReadFile | abi::kFsTruncate;
  r.landlock.handledNet = abi::kNetBindTcp | abi::kNetConnectTcp;
  r.landlock.scoped = abi::kScopeSignal;
  r.landlock.paths = {{"/srv/www", PathAccess::kReadOnly, true, abi::kFsReadFile | abi::kFsReadDir},
                      {"/var/log/a.log", PathAccess::kReadWrite, false, abi::kFsWriteFile}};
  r.landlock.tcpConnectPorts = {9000, 9001};
  r.seccomp.enforced = true;
  r.seccomp.action = SeccompAction::kErrno;
  r.seccomp.allowedSyscalls = 97;
  r.seccomp.rules = 104;
  r.degraded = {"something not enforced"};
  r.verified = true;
  return r;
}

bool hasLine(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(SandboxReportTest, TextLines) {
  auto lines = exampleReport().toLines();
  EXPECT_TRUE(hasLine(lines, "sandbox mode: required"));
  EXPECT_TRUE(hasLine(lines, "identity: dropped to user www-data, uid 33, gid 33, groups 33"));
  EXPECT_TRUE(hasLine(lines, "no_new_privs: yes"));
  EXPECT_TRUE(hasLine(lines, "landlock: ABI 7, enforced"));
  EXPECT_TRUE(hasLine(lines, "landlock handled fs rights: read_file truncate"));
  EXPECT_TRUE(hasLine(lines, "landlock path /srv/www (directory, read-only): read_file read_dir"));
  EXPECT_TRUE(hasLine(lines, "landlock path /var/log/a.log (file, read-write): write_file"));
  EXPECT_TRUE(hasLine(lines, "landlock tcp: bind denied, connect allowed to ports 9000 9001"));
  EXPECT_TRUE(hasLine(lines, "landlock scopes: signal"));
  EXPECT_TRUE(
      hasLine(lines,
              "seccomp: enforced, action EPERM, logged, worker allow-list, 97 syscalls allowed "
              "(104 rules)"));
  EXPECT_TRUE(hasLine(lines, "degraded: something not enforced"));
  EXPECT_TRUE(hasLine(lines, "verified in /proc/self/status: yes"));
  for (const std::string& line : lines) EXPECT_EQ(line.find("seccomp udp"), std::string::npos);
}

TEST(SandboxReportTest, Http3DatagramsAreShown) {
  SandboxReport r = exampleReport();
  r.seccomp.udpDatagrams = true;
  EXPECT_TRUE(hasLine(r.toLines(),
                      "seccomp udp: HTTP/3 datagrams on the inherited sockets (recvmmsg, "
                      "sendmmsg); no UDP socket can be created"));
  EXPECT_EQ(r.toJson()["seccomp"]["udp_datagrams"], true);
}

TEST(SandboxReportTest, TextWithoutLandlock) {
  SandboxReport r;
  r.seccomp.enforced = false;
  auto lines = r.toLines();
  EXPECT_TRUE(hasLine(lines, "landlock: not available in this kernel"));
  EXPECT_TRUE(hasLine(lines, "seccomp: not enforced"));
  EXPECT_TRUE(hasLine(lines, "identity: kept, uid 0, gid 0, groups none"));
}

TEST(SandboxReportTest, Json) {
  nlohmann::json j = exampleReport().toJson();
  EXPECT_EQ(j["mode"], "required");
  EXPECT_EQ(j["identity"]["uid"], 33);
  EXPECT_EQ(j["identity"]["user"], "www-data");
  EXPECT_EQ(j["landlock"]["abi"], 7);
  EXPECT_EQ(j["landlock"]["enforced"], true);
  EXPECT_EQ(j["landlock"]["handled_net"], nlohmann::json({"bind_tcp", "connect_tcp"}));
  EXPECT_EQ(j["landlock"]["scoped"], nlohmann::json({"signal"}));
  ASSERT_EQ(j["landlock"]["paths"].size(), 2u);
  EXPECT_EQ(j["landlock"]["paths"][0]["path"], "/srv/www");
  EXPECT_EQ(j["landlock"]["paths"][0]["kind"], "directory");
  EXPECT_EQ(j["landlock"]["paths"][0]["rights"], nlohmann::json({"read_file", "read_dir"}));
  EXPECT_EQ(j["landlock"]["paths"][1]["access"], "read-write");
  EXPECT_EQ(j["landlock"]["tcp_connect_ports"], nlohmann::json({9000, 9001}));
  EXPECT_EQ(j["seccomp"]["action"], "errno");
  EXPECT_EQ(j["seccomp"]["allowed_syscalls"], 97);
  EXPECT_EQ(j["degraded"].size(), 1u);
  EXPECT_EQ(j["verified"], true);
}

TEST(SandboxReportTest, RightNamesFollowTheBits) {
  EXPECT_EQ(landlockFsRightNames(abi::kFsExecute | abi::kFsIoctlDev),
            (std::vector<std::string>{"execute", "ioctl_dev"}));
  EXPECT_EQ(landlockFsRightNames(0), std::vector<std::string>{});
  // A bit without a name is shown rather than hidden.
  EXPECT_EQ(landlockFsRightNames(1ULL << 40), std::vector<std::string>{"bit40"});
  EXPECT_EQ(landlockScopeNames(abi::kScopeAbstractUnixSocket | abi::kScopeSignal),
            (std::vector<std::string>{"abstract_unix_socket", "signal"}));
  EXPECT_EQ(landlockNetRightNames(abi::kNetConnectTcp), std::vector<std::string>{"connect_tcp"});
}

}  // namespace
}  // namespace scalws::sandbox
