#include "controller/instances/process_facts.h"

#include <pwd.h>

#include <cstdio>

#include "sandbox/process_status.h"

namespace scalws::controller {

namespace {

std::string userName(uid_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) != 0 || found == nullptr) return "";
  return pw.pw_name;
}

}  // namespace

ipc::Json processFacts(pid_t pid) {
  common::Result<sandbox::ProcessStatus> status = sandbox::readProcessStatusOf(pid);
  if (!status.ok()) return {{"error", status.status().message()}};
  const sandbox::ProcessStatus& s = *status;
  static constexpr const char* kSeccomp[] = {"off", "strict", "filter"};
  char caps[32];
  std::snprintf(caps, sizeof(caps), "%016llx", static_cast<unsigned long long>(s.capEffective));
  return {{"uid", {s.uid[0], s.uid[1], s.uid[2], s.uid[3]}},
          {"gid", {s.gid[0], s.gid[1], s.gid[2], s.gid[3]}},
          {"user", userName(s.uid[1])},
          {"no_new_privs", s.noNewPrivs},
          {"seccomp", s.seccompMode >= 0 && s.seccompMode <= 2 ? kSeccomp[s.seccompMode] : "?"},
          {"capabilities", s.capEffective == 0 ? std::string("none") : std::string(caps)}};
}

}  // namespace scalws::controller
