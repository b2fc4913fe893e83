#include "controller/instances/instance_config.h"

#include "common/config/config_loader.h"

namespace scalws::controller {

using common::config::ListenConfig;
using common::config::SiteConfig;

common::Result<SiteConfig> loadInstanceConfig(const std::string& text, const std::string& source) {
  common::config::LoadOptions options;
  options.server_table = common::config::ServerTable::kSiteOnly;
  options.php_pools_from_controller = true;  // pool_binding.h
  options.apps_from_controller = true;       // app_binding.h
  return common::config::loadSiteConfigString(text, source, options);
}

namespace {

bool isV6(const ListenConfig& l) {
  return l.host.find(':') != std::string::npos;
}

bool isWildcard(const ListenConfig& l) {
  return l.host == "0.0.0.0" || l.host == "::";
}

}  // namespace

bool listensOverlap(const ListenConfig& x, const ListenConfig& y) {
  if (x.port != y.port || isV6(x) != isV6(y)) return false;  // v6 sockets are v6-only
  return x.host == y.host || isWildcard(x) || isWildcard(y);
}

std::optional<std::string> listenOverlap(const SiteConfig& a, const SiteConfig& b) {
  for (const ListenConfig& x : a.listens) {
    for (const ListenConfig& y : b.listens) {
      if (listensOverlap(x, y)) return x.address;
    }
  }
  return std::nullopt;
}

bool sameListenAddresses(const SiteConfig& a, const SiteConfig& b) {
  if (a.listens.size() != b.listens.size()) return false;
  for (size_t i = 0; i < a.listens.size(); ++i) {
    const ListenConfig& x = a.listens[i];
    const ListenConfig& y = b.listens[i];
    if (x.host != y.host || x.port != y.port || x.tls.has_value() != y.tls.has_value() ||
        x.http2 != y.http2) {
      return false;
    }
  }
  return true;
}

ipc::Json configSummary(const SiteConfig& site) {
  ipc::Json listen = ipc::Json::array();
  for (const ListenConfig& l : site.listens) {
    listen.push_back(l.address + (l.tls ? " (tls)" : ""));
  }
  return {{"listen", listen}, {"routes", site.routes.size()}};
}

}  // namespace scalws::controller
