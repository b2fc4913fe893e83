#include "controller/apps/app_binding.h"

#include <algorithm>

namespace scalws::controller {

using common::Result;
using common::Status;

std::vector<ipc::AppGrant> appGrantsFor(const std::string& instance,
                                        const std::vector<state::AppRecord>& apps,
                                        const AppSockets& sockets) {
  std::vector<ipc::AppGrant> out;
  for (const state::AppRecord& app : apps) {
    if (!app.instance || *app.instance != instance) continue;
    Result<AppSpec> spec = parseAppSpec(ipc::Json::parse(app.spec, nullptr, false));
    if (!spec.ok()) continue;
    out.push_back(
        ipc::AppGrant{app.assigned_as.empty() ? app.name : app.assigned_as, sockets(*spec)});
  }
  std::sort(out.begin(), out.end(),
            [](const ipc::AppGrant& a, const ipc::AppGrant& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> appRouteNames(const common::config::SiteConfig& site) {
  std::vector<std::string> names;
  for (const auto& route : site.routes) {
    const auto* proxy = std::get_if<common::config::ProxyAction>(&route.action);
    if (proxy == nullptr || proxy->app.empty()) continue;
    if (std::find(names.begin(), names.end(), proxy->app) == names.end()) {
      names.push_back(proxy->app);
    }
  }
  return names;
}

Status checkAppNames(const std::string& instance, const common::config::SiteConfig& site,
                     const std::vector<ipc::AppGrant>& grants) {
  std::string missing;
  for (const std::string& name : appRouteNames(site)) {
    bool bound = std::any_of(grants.begin(), grants.end(),
                             [&](const ipc::AppGrant& g) { return g.name == name; });
    if (bound) continue;
    missing += std::string(missing.empty() ? "" : "; ") + "app '" + name +
               "' (scalwsctl app assign APP " + instance + " --as " + name + ")";
  }
  if (missing.empty()) return Status();
  return Status(
      common::StatusCode::kFailedPrecondition,
      "instance " + instance + ": its app routes use an app no app is assigned as: " + missing);
}

Result<std::vector<ipc::AppGrant>> instanceAppGrants(state::StateStore& store,
                                                     const std::string& instance,
                                                     const common::config::SiteConfig& site,
                                                     const AppSockets& sockets) {
  Result<std::vector<state::AppRecord>> apps = store.listApps();
  if (!apps.ok()) return apps.status();
  std::vector<ipc::AppGrant> grants = appGrantsFor(instance, *apps, sockets);
  SCALWS_RETURN_IF_ERROR(checkAppNames(instance, site, grants));
  return grants;
}

}  // namespace scalws::controller
