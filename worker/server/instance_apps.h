// The apps of an instance-mode worker: what the controller grants (ipc/app_grants.h)
// turned into upstreams for the site's app routes.
//
// An app route (route.app, `app = { name = "api", ... }`) names an app by the name it is
// assigned to the instance under. For each app a route names, the grant of that name
// becomes an [upstream] "app:NAME" (UpstreamConfig::appUpstreamName) with one unix server
// per socket of the app — a server per node process, or the gunicorn/uvicorn master's one
// — and the upstream's defaults: kept connections per loop, round-robin, passive health
// checks; the route then proxies to it as any proxy route does. An app route whose name has
// no grant is an error naming the route and the name. Unix servers make the worker's
// sandbox allow socket(AF_UNIX) (worker_sandbox.cpp), and a reload that adds the first one
// to a worker whose sandbox did not is refused (instance_pools.h poolsFitSandbox).
#pragma once

#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "ipc/app_grants.h"

namespace scalws::worker {

common::Status applyAppGrants(common::config::SiteConfig& site,
                              const std::vector<ipc::AppGrant>& grants);

}  // namespace scalws::worker
