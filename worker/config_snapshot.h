// Everything a loop needs to serve one version of a site's config: the config itself, the
// compiled router, one handler per route and the values derived once (the Server line,
// TLS contexts). Immutable once built and shared by every loop through shared_ptr<const>; a reload
// builds a new one, and connections move to it between requests.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/metrics/metrics_snapshot.h"
#include "common/status.h"
#include "worker/auth/basic_auth.h"
#include "worker/handlers/fastcgi/pool_spec.h"
#include "worker/handlers/proxy/upstream_spec.h"
#include "worker/http/handler.h"
#include "worker/limits/route_limit.h"
#include "worker/response/response_rules.h"
#include "worker/router/router.h"
#include "worker/tls/server_context.h"

namespace scalws::worker {

namespace quic {
class TlsContext;
}

namespace cache {
class CacheSet;
}

class ConfigSnapshot {
 public:
  // `pool_shares`: per-loop shares of the pools named, given by the controller (instance
  // mode: it knows every process of the instance); the other pools get theirs from
  // [server] workers (pool_spec.h).
  // `caches`: the site's caches, made by whoever starts the workers (shared_cache.h); a
  // [cache] it lacks refuses the snapshot. Without `caches` each [cache] gets a memory
  // tier of its own (tests, --check-config). The same for the limit table (caches->limits()).
  static common::Result<std::shared_ptr<const ConfigSnapshot>> build(
      common::config::SiteConfig config, const std::map<std::string, uint32_t>& pool_shares = {},
      const cache::CacheSet* caches = nullptr);

  const common::config::SiteConfig& site() const { return site_; }
  const common::config::ServerConfig& server() const { return server_; }
  const Router& router() const { return *router_; }
  const common::config::RouteConfig& route(int index) const {
    return site_.routes[static_cast<size_t>(index)];
  }
  // Null for a route with `rewrite`, which never runs a handler.
  Handler* handler(int route) const { return handlers_[static_cast<size_t>(route)].get(); }
  // The route's auth with its users file as read at build; null when it has none.
  const BasicAuth* auth(int route) const { return auth_[static_cast<size_t>(route)].get(); }
  // The handler's action for the counters, looked up once here instead of per request.
  common::metrics::Action action(int route) const { return actions_[static_cast<size_t>(route)]; }
  // The route's response rules (headers, errors, compress); null when it has none.
  const ResponseRules* responseRules(int route) const {
    return response_rules_[static_cast<size_t>(route)];
  }
  // The route's `limit` (its own, else [site]'s); null when it has none, and then the
  // request pays nothing for limits.
  const limits::RouteLimit* limit(int route) const {
    return route_limits_[static_cast<size_t>(route)].get();
  }
  // The site's limit table; null when no route has a limit.
  const std::shared_ptr<limits::SharedLimits>& limitTable() const { return limits_; }
  // [site]'s, for answers no route made; null when it has none.
  const ResponseRules* siteResponseRules() const { return response_->site(); }
  uint64_t maxBody(int route) const;
  bool policyAllows(int route, const PeerInfo& peer) const;
  std::string_view serverHeaderLine() const { return server_line_; }
  // The Server line plus, on a TLS connection to a port whose listener serves HTTP/3, the
  // Alt-Svc line advertising it (RFC 7838 §3): what an HTTP/1.1 response head carries.
  std::string_view serverHeaderLine(const PeerInfo& peer) const;
  // The Alt-Svc value for such a connection (`h3=":443"; ma=86400`), else empty.
  std::string_view altSvc(const PeerInfo& peer) const;
  // The PHP pools php routes use, resolved at build (addresses, this loop's share).
  const std::vector<fastcgi::PoolSpec>& phpPools() const { return php_pools_; }
  // The upstreams proxy routes use, resolved at build (addresses, TLS contexts).
  const std::vector<std::shared_ptr<const proxy::UpstreamSpec>>& upstreams() const {
    return upstreams_;
  }
  // The TLS context of listener `listen_index` (site().listens order); null for plain ones.
  // Connections keep a reference: it outlives a reload for the handshakes it began.
  const std::shared_ptr<const tls::ServerContext>& tlsContext(size_t listen_index) const {
    return tls_[listen_index];
  }
  // The QUIC TLS context (GnuTLS) of listener `listen_index` with http3 = true; else null.
  const std::shared_ptr<const quic::TlsContext>& quicContext(size_t listen_index) const {
    return quic_[listen_index];
  }

 private:
  ConfigSnapshot() = default;

  common::config::SiteConfig site_;
  common::config::ServerConfig server_;
  std::unique_ptr<Router> router_;
  std::vector<fastcgi::PoolSpec> php_pools_;  // complete before handlers point into it
  std::vector<std::shared_ptr<const proxy::UpstreamSpec>> upstreams_;
  std::vector<std::unique_ptr<Handler>> handlers_;
  std::vector<std::unique_ptr<BasicAuth>> auth_;  // one per route
  std::vector<common::metrics::Action> actions_;  // one per route
  std::unique_ptr<ResponseRulesSet> response_;
  std::vector<const ResponseRules*> response_rules_;  // one per route, from response_
  std::shared_ptr<limits::SharedLimits> limits_;
  std::vector<std::unique_ptr<limits::RouteLimit>> route_limits_;  // one per route
  std::string server_line_;
  std::vector<std::shared_ptr<const tls::ServerContext>> tls_;  // one per listen
  std::vector<std::shared_ptr<const quic::TlsContext>> quic_;   // one per listen
  struct AltSvc {
    uint16_t port = 0;
    std::string value;        // h3=":PORT"; ma=86400
    std::string server_line;  // server_line_ + "Alt-Svc: <value>\r\n"
  };
  std::vector<AltSvc> alt_svc_;
};

// True when `peer` falls in one of `cidrs`.
bool addressInCidrs(const sockaddr_storage& peer, const std::vector<common::config::Cidr>& cidrs);

}  // namespace scalws::worker
