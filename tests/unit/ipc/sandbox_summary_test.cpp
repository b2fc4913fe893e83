// The sandbox report a worker sends with `ready`: what the worker itself encodes reads
// back, and a report of the wrong shape is refused with the field named, whatever it holds.
#include "ipc/sandbox_summary.h"

#include <gtest/gtest.h>

namespace scalws::ipc {
namespace {

SandboxSummary full() {
  SandboxSummary s;
  s.mode = "on";
  s.identity_changed = true;
  s.user = "scalws-web";
  s.uid = 1003;
  s.gid = 1002;
  s.groups = {1002};
  s.no_new_privs = true;
  s.landlock_abi = 7;
  s.landlock_enforced = true;
  s.landlock_paths = {{"/srv/www", "read_only"}, {"/var/log/scalws/web", "read_write"}};
  s.tcp_connect_ports = {9000};
  s.landlock_scoped = {"abstract_unix_socket", "signal"};
  s.seccomp_enforced = true;
  s.seccomp_action = "errno";
  s.allowed_syscalls = 91;
  s.degraded = {};
  s.verified = true;
  return s;
}

TEST(SandboxSummaryTest, RoundTripsThroughText) {
  SandboxSummary s = full();
  auto back = SandboxSummary::decode(Json::parse(s.encode().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, s);
}

TEST(SandboxSummaryTest, AReportOfTheWrongShapeIsRefusedNamingTheField) {
  struct Case {
    const char* pointer;
    Json value;
    const char* field;
  };
  const Case cases[] = {
      {"/identity/user", 7, "identity.user"},
      {"/identity/uid", "root\x1b[31m", "identity.uid"},
      {"/no_new_privs", "yes", "no_new_privs"},
      {"/landlock/paths", "\x1b]0;owned\x07", "landlock.paths"},
      {"/landlock/paths/0", {{"path", 1}}, "landlock.paths"},
      {"/landlock/tcp_connect_ports/0", 70000, "landlock.tcp_connect_ports"},
      {"/seccomp/action", {{"nested", true}}, "seccomp.action"},
      {"/degraded", {1, "x"}, "degraded"},
      {"/seccomp", nullptr, "seccomp.enforced"},
      {"/mode", std::string(5000, 'm'), "mode"},
  };
  for (const Case& c : cases) {
    Json j = full().encode();
    j[Json::json_pointer(c.pointer)] = c.value;
    auto r = SandboxSummary::decode(j);
    ASSERT_FALSE(r.ok()) << c.pointer;
    EXPECT_NE(r.status().message().find(std::string("\"") + c.field + "\""), std::string::npos)
        << c.pointer << ": " << r.status().message();
  }
  Json missing = full().encode();
  missing.erase("verified");
  EXPECT_FALSE(SandboxSummary::decode(missing).ok());
  EXPECT_FALSE(SandboxSummary::decode(Json::array()).ok());
  Json many = full().encode();
  many["degraded"] = Json::array();
  for (int i = 0; i < 600; ++i) many["degraded"].push_back("x");
  EXPECT_FALSE(SandboxSummary::decode(many).ok());
}

}  // namespace
}  // namespace scalws::ipc
