// The host's users and groups as the controller needs them: who an instance's workers and a
// managed pool's PHP run as, and which group may reach a pool's socket.
//
// Each instance runs as a system user of its own by default, made by the controller when
// the instance is added and removed with it (Debian's useradd/userdel; the user's own group
// comes and goes with it): instanceUserName() says which. The Accounts interface is what
// the control handlers use, so their tests can run without touching /etc/passwd.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace scalws::controller {

struct Account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;      // its primary group
  std::string group;  // that group's name
};

// kNotFound naming the user when there is none (or its primary group has no name).
common::Result<Account> lookUpUser(const std::string& name);
// kNotFound naming the group when there is none.
common::Result<gid_t> lookUpGroup(const std::string& name);

// "scalws-NAME" for an instance NAME; a longer name (a user name has at most 32 bytes)
// becomes "scalws-" + its first 16 bytes + "-" + 8 hex digits of its SHA-256.
std::string instanceUserName(const std::string& instance);

class Accounts {
 public:
  virtual ~Accounts() = default;
  virtual common::Result<Account> lookUp(const std::string& name) { return lookUpUser(name); }
  // A system user `name` with a group of its own, no home, no login shell.
  virtual common::Result<Account> create(const std::string& name, const std::string& comment) = 0;
  // Removes the user (and its own group). kNotFound when there is none.
  virtual common::Status remove(const std::string& name) = 0;
};

// useradd and userdel (from Debian's passwd package), run to completion: a few ms, on the
// controller's loop like its SQLite calls.
class SystemAccounts final : public Accounts {
 public:
  common::Result<Account> create(const std::string& name, const std::string& comment) override;
  common::Status remove(const std::string& name) override;
};

// Runs `argv` (argv[0] an absolute path) with an empty environment and waits; ok on exit
// status 0, else an error quoting the first line it wrote.
common::Status runCommand(const std::vector<std::string>& argv);

}  // namespace scalws::controller
