#include "worker/server/instance_apps.h"

#include <algorithm>
#include <set>

#include "worker/server/missing_grants.h"

namespace scalws::worker {

using common::Status;
using common::config::ProxyAction;
using common::config::SiteConfig;
using common::config::UpstreamConfig;
using common::config::UpstreamServerConfig;

Status applyAppGrants(SiteConfig& site, const std::vector<ipc::AppGrant>& grants) {
  MissingGrants missing;
  std::set<std::string> made;
  for (auto& route : site.routes) {
    auto* proxy = std::get_if<ProxyAction>(&route.action);
    if (proxy == nullptr || proxy->app.empty()) continue;
    auto grant = std::find_if(grants.begin(), grants.end(),
                              [&](const ipc::AppGrant& g) { return g.name == proxy->app; });
    if (grant == grants.end()) {
      missing.add(proxy->where, "route.app.name", "app", proxy->app);
      continue;
    }
    proxy->upstream = UpstreamConfig::appUpstreamName(proxy->app);
    if (!made.insert(proxy->app).second) continue;
    UpstreamConfig upstream;
    upstream.name = proxy->upstream;
    upstream.where = proxy->where;
    for (const std::string& socket : grant->sockets) {
      UpstreamServerConfig server;
      server.address = "unix:" + socket;
      server.kind = UpstreamServerConfig::Kind::kUnix;
      server.unix_path = socket;
      server.where = proxy->where;
      upstream.servers.push_back(std::move(server));
    }
    site.upstreams.push_back(std::move(upstream));
  }
  return missing.status();
}

}  // namespace scalws::worker
