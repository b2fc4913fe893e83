// The host's users and groups as the controller needs them: who an instance's workers and a
// managed pool's PHP run as, and which group may reach a pool's socket.
#pragma once

#include <sys/types.h>

#include <string>

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

}  // namespace scalws::controller
