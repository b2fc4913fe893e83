#include "controller/system_accounts.h"

#include <grp.h>
#include <pwd.h>

namespace scalws::controller {

using common::Result;

Result<Account> lookUpUser(const std::string& name) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (name.empty() || getpwnam_r(name.c_str(), &pw, buf, sizeof(buf), &found) != 0 ||
      found == nullptr) {
    return common::notFound("no user '" + name + "' on this host");
  }
  Account a;
  a.name = name;
  a.uid = pw.pw_uid;
  a.gid = pw.pw_gid;
  struct group gr;
  struct group* gfound = nullptr;
  char gbuf[4096];
  if (getgrgid_r(pw.pw_gid, &gr, gbuf, sizeof(gbuf), &gfound) != 0 || gfound == nullptr) {
    return common::notFound("user '" + name + "' has no named primary group");
  }
  a.group = gr.gr_name;
  return a;
}

Result<gid_t> lookUpGroup(const std::string& name) {
  struct group gr;
  struct group* found = nullptr;
  char buf[4096];
  if (name.empty() || getgrnam_r(name.c_str(), &gr, buf, sizeof(buf), &found) != 0 ||
      found == nullptr) {
    return common::notFound("no group '" + name + "' on this host");
  }
  return gr.gr_gid;
}

}  // namespace scalws::controller
