#include "controller/apps/app_binding.h"

#include "controller/route_bindings.h"

namespace scalws::controller {

using common::Result;
using common::Status;

namespace {

const std::string* appOf(const common::config::RouteConfig& route) {
  const auto* proxy = std::get_if<common::config::ProxyAction>(&route.action);
  return proxy == nullptr || proxy->app.empty() ? nullptr : &proxy->app;
}

}  // namespace

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
  sortByName(out);
  return out;
}

std::vector<std::string> appRouteNames(const common::config::SiteConfig& site) {
  return routeNames(site, appOf);
}

Status checkAppNames(const std::string& instance, const common::config::SiteConfig& site,
                     const std::vector<ipc::AppGrant>& grants) {
  return checkRouteNames(
      instance, site, appOf, grantNames(grants),
      {"app", "scalwsctl app assign APP", "its app routes use an app no app is assigned as"});
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
