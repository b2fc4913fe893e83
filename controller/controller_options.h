// scalws-controller's command line:
//
//   scalws-controller [--state-dir DIR] [--socket PATH] [--reserve-cpus LIST]
//                     [--scalwsd PATH] [--crash-limit N] [--crash-window SECONDS]
//                     [--metrics-listen ADDR] [--pool-dir DIR] [--php-fpm PATH]
//                     [--allow-php-fpm PATH]... [--allow-root-instances]
//                     [--pool-log-size SIZE] [--app-dir DIR] [--app-log-size SIZE]
//                     [--dashboard-listen ADDR [--dashboard-auth FILE]]
//                     [--scalws-front PATH] [--front-user USER] [--front-processes N]
//                     [--front-header-timeout DURATION] [--front-max-waiting N]
//
// --scalwsd defaults to the scalwsd next to the controller's own executable. The crash
// settings tune the crash-loop detection (restart_policy.h): N unexpected worker exits of
// one instance within the window mark it failed. --metrics-listen (off by default) serves
// the Prometheus text at http://ADDR/metrics (metrics_http_server.h). --pool-dir holds the
// sockets of managed PHP pools (it must be traversable by the instances' users) and
// --php-fpm is the binary a managed pool runs unless `pool add` names another
// (pool_manager.h); --allow-php-fpm adds a binary `pool add --php-fpm` may name (the
// controller runs no other: the group scalws may add pools, it must not pick what runs as
// root). --allow-root-instances lets `instance add --user` name a uid 0 user (refused
// otherwise, to whoever asks). --pool-log-size is where a managed pool's php-fpm.log rotates
// (fifo_log.h), --app-log-size where an app's app.log does; --app-dir holds the apps'
// sockets (app_manager.h). --dashboard-listen (off by default) serves the read-only dashboard at
// http://ADDR/ (dashboard/dashboard.h); on an address other than a loopback one it needs
// --dashboard-auth, an htpasswd-style file (common/auth/htpasswd.h), or the arguments are
// refused: the page names users, CPUs and paths that are nobody else's business. The
// --front-* options shape the fronts of addresses instances share (controller/shared/):
// the binary (default scalws-front next to the controller), the user they run as (made
// when missing), how many per address, how long a client may take to send what names its
// host, and how many clients a front may wait on at once. Parsing is pure; main.cpp runs it.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "controller/fifo_log.h"
#include "controller/restart_policy.h"

namespace scalws::controller {

inline constexpr const char* kDefaultStateDir = "/var/lib/scalws";
inline constexpr const char* kDefaultSocketPath = "/run/scalws/control.sock";
inline constexpr const char* kDefaultPoolDir = "/run/scalws/php";

struct ControllerOptions {
  std::string state_dir = kDefaultStateDir;
  std::string socket_path = kDefaultSocketPath;
  std::string reserve_cpus;      // cpulist; "" = none
  std::string scalwsd;           // "" = next to this executable
  std::string metrics_listen;    // "" = no Prometheus endpoint
  std::string dashboard_listen;  // "" = no dashboard
  std::string dashboard_auth;    // "" = no credentials asked (loopback only)
  std::string pool_dir = kDefaultPoolDir;
  std::string app_dir = "/run/scalws/apps";  // --app-dir: the apps' sockets (app_manager.h)
  // --log-dir: LOG_DIR/NAME/{access,error}.log of each instance (instance_log_files.h).
  std::string log_dir = "/var/log/scalws";
  std::string php_fpm = "/usr/sbin/php-fpm8.2";
  std::vector<std::string> allowed_php_fpm;     // besides php_fpm
  uint64_t pool_log_size = kDefaultPoolLogCap;  // php-fpm.log rotates at this size
  uint64_t app_log_size = kDefaultAppLogCap;    // app.log rotates at this size
  bool allow_root_instances = false;
  std::string front_binary;                   // "" = scalws-front next to this executable
  std::string front_user = "scalws-front";    // the fronts' user (made when missing)
  uint32_t front_processes = 1;               // fronts per shared address
  uint64_t front_header_timeout_ms = 10'000;  // a client's first bytes must name its host
  uint32_t front_max_waiting = 4096;          // clients one front reads the first bytes of
  RestartLimits restart;
  bool help = false;
  bool version = false;
};

// kInvalidArgument (a usage error: exit 2) with a message naming the bad argument.
// True for 127.0.0.0/8 and ::1 (a canonical host of common::config::ListenAddress).
bool isLoopbackHost(const std::string& host, bool v6);

common::Result<ControllerOptions> parseControllerArgs(const std::vector<std::string>& args);

extern const char* const kControllerUsage;

}  // namespace scalws::controller
