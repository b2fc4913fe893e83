// FakeAccounts: the users the control handlers make and remove, kept in memory (the host's
// real users are found as they are), so handler tests never touch /etc/passwd.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "controller/system_accounts.h"

namespace scalws::controller {

class FakeAccounts final : public Accounts {
 public:
  common::Result<Account> lookUp(const std::string& name) override {
    auto it = made.find(name);
    if (it != made.end()) return it->second;
    return lookUpUser(name);
  }
  common::Result<Account> create(const std::string& name, const std::string&) override {
    if (!fail_create.ok()) return fail_create;
    Account a{name, static_cast<uid_t>(5000 + made.size()), static_cast<gid_t>(5000 + made.size()),
              name};
    made[name] = a;
    created.push_back(name);
    return a;
  }
  common::Status remove(const std::string& name) override {
    removed.push_back(name);
    return made.erase(name) == 1 ? common::Status() : common::notFound(name);
  }

  std::map<std::string, Account> made;
  std::vector<std::string> created;
  std::vector<std::string> removed;
  common::Status fail_create;
};

}  // namespace scalws::controller
