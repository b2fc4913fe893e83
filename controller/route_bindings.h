// What binding PHP pools and apps to an instance share (pools/pool_binding.h,
// apps/app_binding.h): a site's routes name what they use (a php route its pool, an app
// route its app); a record assigned to the instance as a name becomes a grant of that name,
// handed to the workers in name order; a name the routes use that no grant has refuses a
// start or a reload, naming the command that binds it.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::controller {

// The names `site`'s routes use, each once, in route order: `nameOf(route)` is the one a
// route uses (null when it uses none).
std::vector<std::string> routeNames(
    const common::config::SiteConfig& site,
    const std::function<const std::string*(const common::config::RouteConfig&)>& nameOf);

// Those of `names` that `granted` lacks, in their order.
std::vector<std::string> unboundNames(const std::vector<std::string>& names,
                                      const std::vector<std::string>& granted);

// How a refusal speaks of one kind of record.
struct BindingWords {
  const char* kind;     // "pool": "pool 'main'"
  const char* command;  // what binds it, before "INSTANCE --as NAME"
  const char* refusal;  // after "instance NAME: ", before the missing names
};

// Ok when every name `site`'s routes use (`nameOf`, as routeNames) is in `granted`; else
// kFailedPrecondition naming each missing one with the command that binds it.
common::Status checkRouteNames(
    const std::string& instance, const common::config::SiteConfig& site,
    const std::function<const std::string*(const common::config::RouteConfig&)>& nameOf,
    const std::vector<std::string>& granted, const BindingWords& words);

// The names of `grants` (any grant type with a `name`), in their order.
template <typename Grant>
std::vector<std::string> grantNames(const std::vector<Grant>& grants) {
  std::vector<std::string> out;
  for (const Grant& g : grants) out.push_back(g.name);
  return out;
}

// `grants` in name order: what a worker is told does not depend on the store's row order.
template <typename Grant>
void sortByName(std::vector<Grant>& grants) {
  std::sort(grants.begin(), grants.end(),
            [](const Grant& a, const Grant& b) { return a.name < b.name; });
}

}  // namespace scalws::controller
