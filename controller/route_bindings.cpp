#include "controller/route_bindings.h"

namespace scalws::controller {

std::vector<std::string> routeNames(
    const common::config::SiteConfig& site,
    const std::function<const std::string*(const common::config::RouteConfig&)>& nameOf) {
  std::vector<std::string> names;
  for (const common::config::RouteConfig& route : site.routes) {
    const std::string* name = nameOf(route);
    if (name == nullptr) continue;
    if (std::find(names.begin(), names.end(), *name) == names.end()) names.push_back(*name);
  }
  return names;
}

std::vector<std::string> unboundNames(const std::vector<std::string>& names,
                                      const std::vector<std::string>& granted) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    if (std::find(granted.begin(), granted.end(), name) == granted.end()) out.push_back(name);
  }
  return out;
}

common::Status checkRouteNames(
    const std::string& instance, const common::config::SiteConfig& site,
    const std::function<const std::string*(const common::config::RouteConfig&)>& nameOf,
    const std::vector<std::string>& granted, const BindingWords& words) {
  std::string missing;
  for (const std::string& name : unboundNames(routeNames(site, nameOf), granted)) {
    missing += std::string(missing.empty() ? "" : "; ") + words.kind + " '" + name + "' (" +
               words.command + " " + instance + " --as " + name + ")";
  }
  if (missing.empty()) return common::Status();
  return common::Status(common::StatusCode::kFailedPrecondition,
                        "instance " + instance + ": " + words.refusal + ": " + missing);
}

}  // namespace scalws::controller
