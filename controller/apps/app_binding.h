// How an instance's app routes find the controller's apps.
//
// An instance config names apps only in its routes: app = { name = "api", ... }. `scalwsctl
// app assign APP INSTANCE [--as NAME]` binds a registered app to the name NAME (default:
// the app's own name) for that instance; at start and at every reload the controller hands
// each worker one grant per app assigned to the instance (ipc/app_grants.h): the name and
// the app's sockets. An app route whose name is not bound refuses the start (or the
// reload) with a message naming the name and the command that fixes it. Like pools, an
// assignment is stored at once and reaches running workers on `instance reload`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "controller/apps/app_spec.h"
#include "controller/state/records.h"
#include "controller/state/state_store.h"
#include "ipc/app_grants.h"

namespace scalws::controller {

// Where an app's processes listen (app_spec.h appSocketPaths with the --app-dir).
using AppSockets = std::function<std::vector<std::string>(const AppSpec&)>;

// One grant per app of `apps` assigned to `instance`, ordered by the name it is bound as
// (an app whose stored spec does not parse is left out).
std::vector<ipc::AppGrant> appGrantsFor(const std::string& instance,
                                        const std::vector<state::AppRecord>& apps,
                                        const AppSockets& sockets);

// The app names `site`'s app routes use, each once, in route order.
std::vector<std::string> appRouteNames(const common::config::SiteConfig& site);

// Ok when every app route of `site` names a granted app; else kFailedPrecondition naming
// each unbound name and how to bind it.
common::Status checkAppNames(const std::string& instance, const common::config::SiteConfig& site,
                             const std::vector<ipc::AppGrant>& grants);

// The grants of `instance` as the store holds them now, checked against `site`.
common::Result<std::vector<ipc::AppGrant>> instanceAppGrants(state::StateStore& store,
                                                             const std::string& instance,
                                                             const common::config::SiteConfig& site,
                                                             const AppSockets& sockets);

}  // namespace scalws::controller
