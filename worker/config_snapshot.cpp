#include "worker/config_snapshot.h"

#include <arpa/inet.h>

#include <cstring>

#include "worker/handlers/cache/cache_purge_handler.h"
#include "worker/handlers/cache/shared_cache.h"
#include "worker/handlers/fastcgi/php_handler.h"
#include "worker/handlers/proxy/proxy_handler.h"
#include "worker/handlers/redirect_handler.h"
#include "worker/handlers/respond_handler.h"
#include "worker/handlers/static/static_handler.h"
#include "worker/handlers/status_handler.h"
#if SCALWS_HTTP3
#include "worker/quic/tls_context.h"
#endif

namespace scalws::worker {

using common::Result;
using common::config::RouteConfig;

namespace {

// The cache named `name`: the one whoever starts the workers made (every worker must
// share it), or, when nobody made any (a snapshot built on its own: tests, check-config),
// one of our own.
Result<std::shared_ptr<cache::SharedCache>> cacheFor(const std::string& name,
                                                     const common::config::SiteConfig& site,
                                                     const cache::CacheSet* caches,
                                                     cache::CacheSet& own) {
  if (caches != nullptr) {
    if (auto found = caches->find(name)) return found;
    return common::invalidArgument("[cache." + name + "] has no memory tier made for it (" +
                                   "a new cache needs a restart)");
  }
  if (auto found = own.find(name)) return found;
  for (const common::config::CacheConfig& config : site.caches) {
    if (config.name != name) continue;
    auto made = cache::SharedCache::create(config);
    if (!made.ok()) return made.status();
    own.add(name, *made);
    return made;
  }
  return common::invalidArgument("no [cache." + name + "]");
}

// The limit table every `limit` of the site counts in: the one whoever starts the workers
// made, or, for a snapshot built on its own, one of our own; null when nothing is limited.
Result<std::shared_ptr<limits::SharedLimits>> limitTableFor(const common::config::SiteConfig& site,
                                                            const cache::CacheSet* caches) {
  if (!common::config::hasLimits(site)) return std::shared_ptr<limits::SharedLimits>();
  if (caches == nullptr) return limits::SharedLimits::create(site.limit_table);
  if (caches->limits() == nullptr || caches->limits()->bytes() != site.limit_table) {
    return common::invalidArgument(
        "the limit table was not made for this limit_table (a new one needs a restart)");
  }
  return caches->limits();
}

const common::config::CacheConfig* cacheConfig(const common::config::SiteConfig& site,
                                               const std::string& name) {
  for (const common::config::CacheConfig& config : site.caches) {
    if (config.name == name) return &config;
  }
  return nullptr;
}

Result<std::unique_ptr<Handler>> makeHandler(
    const RouteConfig& route, const common::config::SiteConfig& site,
    const common::config::ServerConfig& server, const std::vector<fastcgi::PoolSpec>& pools,
    const std::vector<std::shared_ptr<const proxy::UpstreamSpec>>& upstreams,
    const cache::CacheSet* caches, cache::CacheSet& own_caches) {
  if (const auto* purge = std::get_if<common::config::CachePurgeAction>(&route.action)) {
    auto shared = cacheFor(purge->cache, site, caches, own_caches);
    if (!shared.ok())
      return common::invalidArgument(route.where.toString() + ": " + shared.status().message());
    return std::unique_ptr<Handler>(
        new cache::CachePurgeHandler(*shared, *cacheConfig(site, purge->cache)));
  }
  if (const auto* respond = std::get_if<common::config::RespondAction>(&route.action)) {
    return std::unique_ptr<Handler>(new RespondHandler(*respond));
  }
  if (const auto* redirect = std::get_if<common::config::RedirectAction>(&route.action)) {
    return std::unique_ptr<Handler>(new RedirectHandler(*redirect));
  }
  if (route.rewrite) return std::unique_ptr<Handler>();  // routing goes on elsewhere
  if (std::holds_alternative<common::config::StatusAction>(route.action)) {
    return std::unique_ptr<Handler>(new StatusHandler());
  }
  if (const auto* files = std::get_if<common::config::StaticAction>(&route.action)) {
    // Opens the docroot now, before any sandbox; a missing root names the route.
    auto handler = StaticHandler::create(*files, route.where);
    if (!handler.ok()) return handler.status();
    return std::unique_ptr<Handler>(std::move(handler).value());
  }
  if (const auto* php = std::get_if<common::config::PhpAction>(&route.action)) {
    const fastcgi::PoolSpec* pool = nullptr;
    for (const auto& p : pools) pool = p.name == php->pool ? &p : pool;
    if (pool == nullptr) {
      return common::invalidArgument(route.where.toString() + ": no php_pool \"" + php->pool +
                                     "\"");
    }
    auto handler = fastcgi::PhpHandler::create(
        *php, *pool, route.policy.max_body.value_or(server.max_body),
        server.server_header.empty() ? "scalws" : server.server_header, server.temp_dir);
    if (!handler.ok()) {
      return common::invalidArgument(route.where.toString() + ": " + handler.status().message());
    }
    return std::unique_ptr<Handler>(std::move(handler).value());
  }
  if (const auto* forward = std::get_if<common::config::ProxyAction>(&route.action)) {
    for (const auto& upstream : upstreams) {
      if (upstream->name == forward->upstream) {
        auto handler = std::make_unique<proxy::ProxyHandler>(*forward, upstream);
        if (!forward->cache.empty()) {
          auto shared = cacheFor(forward->cache, site, caches, own_caches);
          if (!shared.ok()) {
            return common::invalidArgument(route.where.toString() + ": " +
                                           shared.status().message());
          }
          handler->setCache(*shared, *cacheConfig(site, forward->cache));
        }
        return std::unique_ptr<Handler>(std::move(handler));
      }
    }
    return common::invalidArgument(route.where.toString() + ": no upstream \"" + forward->upstream +
                                   "\"");
  }
  return common::invalidArgument(route.where.toString() + ": this action is not supported yet");
}

bool prefixMatches(const uint8_t* addr, const uint8_t* net, unsigned bits) {
  unsigned full = bits / 8;
  if (std::memcmp(addr, net, full) != 0) return false;
  unsigned rest = bits % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (addr[full] & mask) == (net[full] & mask);
}

}  // namespace

bool addressInCidrs(const sockaddr_storage& peer, const std::vector<common::config::Cidr>& cidrs) {
  uint8_t v4[4];
  uint8_t v6[16];
  bool is_v4 = false;
  if (peer.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&peer);
    std::memcpy(v4, &sin->sin_addr, 4);
    is_v4 = true;
  } else if (peer.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&peer);
    std::memcpy(v6, &sin6->sin6_addr, 16);
    // An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d.
    static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(v6, kMapped, 12) == 0) {
      std::memcpy(v4, v6 + 12, 4);
      is_v4 = true;
    }
  } else {
    return false;  // unix socket peers are not addressed by CIDR
  }
  for (const auto& c : cidrs) {
    if (c.v6 && !is_v4 && prefixMatches(v6, c.addr, c.prefix_len)) return true;
    if (!c.v6 && is_v4 && prefixMatches(v4, c.addr, c.prefix_len)) return true;
  }
  return false;
}

Result<std::shared_ptr<const ConfigSnapshot>> ConfigSnapshot::build(
    common::config::SiteConfig config, const std::map<std::string, uint32_t>& pool_shares,
    const cache::CacheSet* caches) {
  cache::CacheSet own_caches;
  std::shared_ptr<ConfigSnapshot> s(new ConfigSnapshot());
  s->site_ = std::move(config);
  s->server_ = common::config::serverOrDefaults(s->site_);
  s->router_ = std::make_unique<Router>(s->site_.routes);
  std::string errors;
  // Every serving loop of the site shares a pool's max_conns (pool_spec.h has the rule).
  for (const auto& pool : s->site_.php_pools) {
    auto given = pool_shares.find(pool.name);
    // A share from the controller already accounts for every loop of the instance.
    uint32_t loops = given != pool_shares.end() ? 1 : s->server_.workers;
    Result<fastcgi::PoolSpec> spec = fastcgi::resolvePoolSpec(pool, loops);
    if (!spec.ok()) return spec.status();
    if (given != pool_shares.end() && spec->keep_conn) spec->share = given->second;
    s->php_pools_.push_back(std::move(spec).value());
  }
  for (const auto& upstream : s->site_.upstreams) {
    // Reads the TLS CA bundle now: before the sandbox, and before a parent forks.
    Result<std::shared_ptr<const proxy::UpstreamSpec>> spec = proxy::resolveUpstreamSpec(upstream);
    if (!spec.ok()) {
      if (!errors.empty()) errors += '\n';
      errors += spec.status().message();
      continue;
    }
    s->upstreams_.push_back(std::move(spec).value());
  }
  for (const RouteConfig& route : s->site_.routes) {
    // Users files are read here: before the sandbox, and anew on every reload.
    s->auth_.emplace_back();
    if (route.auth) {
      Result<std::unique_ptr<BasicAuth>> auth = BasicAuth::load(*route.auth);
      if (auth.ok()) {
        s->auth_.back() = std::move(auth).value();
      } else {
        if (!errors.empty()) errors += '\n';
        errors += auth.status().message();
      }
    }
    Result<std::unique_ptr<Handler>> h =
        makeHandler(route, s->site_, s->server_, s->php_pools_, s->upstreams_, caches, own_caches);
    if (!h.ok()) {
      if (!errors.empty()) errors += '\n';
      errors += h.status().message();
      s->handlers_.emplace_back();
      s->actions_.push_back(common::metrics::Action::kOther);
      continue;
    }
    s->actions_.push_back(h.value() ? common::metrics::actionFromName(h.value()->actionName())
                                    : common::metrics::Action::kOther);
    s->handlers_.push_back(std::move(h).value());
  }
  // The limit table is mapped here: before the sandbox, and before a parent forks.
  Result<std::shared_ptr<limits::SharedLimits>> limit_table = limitTableFor(s->site_, caches);
  if (!limit_table.ok()) return limit_table.status();
  s->limits_ = std::move(limit_table).value();
  for (const RouteConfig& route : s->site_.routes) {
    s->route_limits_.emplace_back();
    if (s->limits_ == nullptr || route.rewrite) continue;
    if (route.limit) {
      s->route_limits_.back() =
          std::make_unique<limits::RouteLimit>(limits::makeRouteLimit(*route.limit, &route));
    } else if (s->site_.limit) {
      s->route_limits_.back() =
          std::make_unique<limits::RouteLimit>(limits::makeRouteLimit(*s->site_.limit, nullptr));
    }
  }
  // Error page roots are opened here, before the sandbox.
  auto response = ResponseRulesSet::build(s->site_);
  if (!response.ok()) {
    if (!errors.empty()) errors += '\n';
    errors += response.status().message();
  } else {
    s->response_ = std::move(response).value();
    for (size_t i = 0; i < s->site_.routes.size(); ++i) {
      s->response_rules_.push_back(s->response_->route(i));
    }
  }
  // Certificates and keys are read here: before the sandbox, and in a supervising parent
  // before it forks, so every worker inherits them.
  for (const auto& listen : s->site_.listens) {
    s->tls_.emplace_back();
    s->quic_.emplace_back();
    if (!listen.tls) continue;
    auto context = tls::ServerContext::build(listen);
    if (!context.ok()) {
      if (!errors.empty()) errors += '\n';
      errors += context.status().message();
      continue;
    }
    s->tls_.back() = std::move(context).value();
#if SCALWS_HTTP3
    if (listen.http3) {
      // The same files again for GnuTLS, which does QUIC's handshake.
      auto quic = quic::TlsContext::build(listen, s->tls_.back());
      if (!quic.ok()) {
        if (!errors.empty()) errors += '\n';
        errors += quic.status().message();
        continue;
      }
      s->quic_.back() = std::move(quic).value();
    }
#endif
  }
  if (!errors.empty()) return common::invalidArgument(errors);
  if (!s->server_.server_header.empty()) {
    s->server_line_ = "Server: " + s->server_.server_header + "\r\n";
  }
  for (const auto& listen : s->site_.listens) {
    if (!listen.http3) continue;
    bool known = false;
    for (const AltSvc& a : s->alt_svc_) known = known || a.port == listen.port;
    if (known) continue;
    // RFC 9114 §3.1.1: the alternative is the same host on this UDP port; a day's "ma"
    // as the major browsers' servers send it.
    AltSvc a;
    a.port = listen.port;
    a.value = "h3=\":" + std::to_string(listen.port) + "\"; ma=86400";
    a.server_line = s->server_line_ + "Alt-Svc: " + a.value + "\r\n";
    s->alt_svc_.push_back(std::move(a));
  }
  return std::shared_ptr<const ConfigSnapshot>(std::move(s));
}

std::string_view ConfigSnapshot::serverHeaderLine(const PeerInfo& peer) const {
  if (peer.tls) {
    for (const AltSvc& a : alt_svc_) {
      if (a.port == peer.local_port) return a.server_line;
    }
  }
  return server_line_;
}

std::string_view ConfigSnapshot::altSvc(const PeerInfo& peer) const {
  if (peer.tls) {
    for (const AltSvc& a : alt_svc_) {
      if (a.port == peer.local_port) return a.value;
    }
  }
  return {};
}

uint64_t ConfigSnapshot::maxBody(int route) const {
  const auto& policy = site_.routes[static_cast<size_t>(route)].policy;
  return policy.max_body.value_or(server_.max_body);
}

bool ConfigSnapshot::policyAllows(int route, const PeerInfo& peer) const {
  const auto& allow = site_.routes[static_cast<size_t>(route)].policy.allow;
  return allow.empty() || addressInCidrs(peer.address, allow);
}

}  // namespace scalws::worker
