// An instance's config as the controller handles it: TOML text whose [server] holds only
// the site's own keys (ServerTable::kSiteOnly: mode, CPUs, user and log files come from
// the controller), validated by the same loader scalwsd uses before anything is stored or
// sent to a worker.
#pragma once

#include <optional>
#include <string>

#include "common/config/site_config.h"
#include "common/status.h"
#include "ipc/message.h"

namespace scalws::controller {

// Loads `text` as read from `source` (an absolute path: relative paths in the config are
// resolved against its directory). Errors list every problem as file:line:col.
common::Result<common::config::SiteConfig> loadInstanceConfig(const std::string& text,
                                                              const std::string& source);

// Whether two listeners would take the same connections (same port and family, same host
// or either a wildcard).
bool listensOverlap(const common::config::ListenConfig& a, const common::config::ListenConfig& b);

// When `a` and `b` would listen on the same address (same port and family, same host or
// either a wildcard), the first such address of `a`. SO_REUSEPORT would let both bind and
// silently share the traffic, so the controller refuses it instead.
std::optional<std::string> listenOverlap(const common::config::SiteConfig& a,
                                         const common::config::SiteConfig& b);

// True when both listen on the same addresses with the same options, in the same order
// (a running worker can then take the new config in place).
bool sameListenAddresses(const common::config::SiteConfig& a, const common::config::SiteConfig& b);

// {"listen":["127.0.0.1:8080", ...], "routes":N} for `instance show`.
ipc::Json configSummary(const common::config::SiteConfig& site);

}  // namespace scalws::controller
