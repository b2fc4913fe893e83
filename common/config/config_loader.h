// Loads and validates a site's TOML.
//
// A config is accepted whole or refused whole: on failure the Status message holds every
// problem found, one per line, each as "file:line:col: what is wrong" — unknown keys,
// wrong types, impossible values — not only the first.
#pragma once

#include <string>
#include <string_view>

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::common::config {

class HostResolver;

// Which [server] keys a config may set.
enum class ServerTable {
  kFull,  // standalone scalwsd: every key
  // An instance config under the controller: only what belongs to the site (timeouts,
  // limits, Server header, access_log_format, log_level, access_log = false). Processes,
  // CPUs, user, sandbox, temp_dir and the log files are the controller's: each such key is
  // refused with where it is set instead.
  kSiteOnly,
};

struct LoadOptions {
  ServerTable server_table = ServerTable::kFull;
  // Under the controller the PHP pools are the controller's (scalwsctl pool add/assign):
  // [php_pool.NAME] tables may only tune the worker's side (timeout, queue_timeout, queue)
  // and php routes may name pools no table defines; the controller supplies address and
  // max_conns for the pools assigned to the instance and checks the names at start.
  bool php_pools_from_controller = false;
  // Apps run only under the controller: a route.app (an app by the name it is assigned to
  // the instance under) is accepted only then. The controller hands the worker the app's
  // sockets and checks the names at start; standalone, route.app is refused with a pointer
  // to a proxy route to the app's sockets.
  bool apps_from_controller = false;
  // Turns [upstream] host names into addresses at load; null: processResolver()
  // (host_resolver.h), getaddrinfo until the process sealed it in its sandbox.
  HostResolver* resolver = nullptr;
};

Result<SiteConfig> loadSiteConfigFile(const std::string& path, const LoadOptions& options = {});
Result<SiteConfig> loadSiteConfigString(std::string_view text, std::string_view source_name,
                                        const LoadOptions& options = {});

}  // namespace scalws::common::config
