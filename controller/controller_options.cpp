#include "controller/controller_options.h"

#include <charconv>

#include "common/config/listen_address.h"
#include "common/config/units.h"
#include "common/cpu_set.h"

namespace scalws::controller {

const char* const kControllerUsage =
    "usage: scalws-controller [--state-dir DIR] [--socket PATH] [--reserve-cpus LIST]\n"
    "                         [--scalwsd PATH] [--crash-limit N] [--crash-window SECONDS]\n"
    "                         [--metrics-listen ADDR] [--pool-dir DIR] [--php-fpm PATH]\n"
    "                         [--allow-php-fpm PATH]... [--app-dir DIR] [--allow-root-instances]\n"
    "                         [--log-dir DIR]\n"
    "                         [--pool-log-size SIZE] [--app-log-size SIZE]\n"
    "                         [--dashboard-listen ADDR [--dashboard-auth FILE]]\n"
    "                         [--scalws-front PATH] [--front-user USER] [--front-processes N]\n"
    "                         [--front-header-timeout DURATION] [--front-max-waiting N]\n"
    "  --state-dir DIR       state.db and the lock live here (default /var/lib/scalws)\n"
    "  --socket PATH         the control socket (default /run/scalws/control.sock)\n"
    "  --reserve-cpus LIST   CPUs never given to instances, e.g. 0 or 0,2-3\n"
    "  --scalwsd PATH        the worker binary (default: scalwsd next to this program)\n"
    "  --crash-limit N       unexpected worker exits within the window that mark an\n"
    "                        instance failed (default 10)\n"
    "  --crash-window SECS   that window (default 600)\n"
    "  --metrics-listen ADDR serve Prometheus metrics at http://ADDR/metrics, e.g.\n"
    "                        127.0.0.1:9145 (default: off)\n"
    "  --pool-dir DIR        sockets of managed PHP pools, reachable by the instances' users\n"
    "                        (default /run/scalws/php)\n"
    "  --app-dir DIR         sockets of the apps, a directory each (default /run/scalws/apps)\n"
    "  --log-dir DIR         each instance's access.log and error.log, in DIR/NAME/ (default\n"
    "                        /var/log/scalws)\n"
    "  --php-fpm PATH        php-fpm for managed pools (default /usr/sbin/php-fpm8.2)\n"
    "  --allow-php-fpm PATH  another php-fpm binary `pool add --php-fpm` may name (repeat\n"
    "                        for more); no other binary is ever run\n"
    "  --pool-log-size SIZE  a managed pool's php-fpm.log rotates to php-fpm.log.1 at this\n"
    "                        size, e.g. 512K or 16M (default 4M, at least 64K)\n"
    "  --app-log-size SIZE   an app's app.log rotates to app.log.1 at this size (default\n"
    "                        16M, at least 64K)\n"
    "  --dashboard-listen ADDR  serve the read-only dashboard at http://ADDR/, e.g.\n"
    "                        127.0.0.1:9146 (default: off); an address other than\n"
    "                        loopback needs --dashboard-auth\n"
    "  --dashboard-auth FILE htpasswd-style user:hash lines (bcrypt $2y$ or SHA-crypt\n"
    "                        $5$/$6$) the dashboard asks HTTP Basic credentials of\n"
    "  --allow-root-instances  let `instance add --user` name root (a uid 0 user): its\n"
    "                        workers could then read every file of the host\n"
    "  --scalws-front PATH   the front of shared addresses (default: scalws-front next to\n"
    "                        this program)\n"
    "  --front-user USER     who fronts run as (default scalws-front, made when missing)\n"
    "  --front-processes N   fronts per shared address (default 1)\n"
    "  --front-header-timeout DURATION  a client must name its host (SNI, Host) by then,\n"
    "                        e.g. 10s (default)\n"
    "  --front-max-waiting N clients one front waits on for their first bytes; past it the\n"
    "                        oldest is closed (default 4096)\n"
    "Signals: SIGINT stops the instances gracefully, then the controller; SIGTERM does too,\n"
    "except under a systemd restart job (then the instances keep serving for the next\n"
    "controller); SIGUSR2 exits and leaves the instances serving.\n";

bool isLoopbackHost(const std::string& host, bool v6) {
  return v6 ? host == "::1" : host.rfind("127.", 0) == 0;
}

common::Result<ControllerOptions> parseControllerArgs(const std::vector<std::string>& args) {
  ControllerOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](std::string& out) -> common::Status {
      if (i + 1 >= args.size() || args[i + 1].empty()) {
        return common::invalidArgument(arg + " needs a value");
      }
      out = args[++i];
      return common::okStatus();
    };
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--version") {
      o.version = true;
    } else if (arg == "--state-dir") {
      SCALWS_RETURN_IF_ERROR(value(o.state_dir));
    } else if (arg == "--socket") {
      SCALWS_RETURN_IF_ERROR(value(o.socket_path));
    } else if (arg == "--reserve-cpus") {
      SCALWS_RETURN_IF_ERROR(value(o.reserve_cpus));
      common::Result<common::CpuSet> parsed = common::parseCpuList(o.reserve_cpus);
      if (!parsed.ok())
        return common::invalidArgument("--reserve-cpus: " + parsed.status().message());
    } else if (arg == "--scalwsd") {
      SCALWS_RETURN_IF_ERROR(value(o.scalwsd));
    } else if (arg == "--metrics-listen") {
      SCALWS_RETURN_IF_ERROR(value(o.metrics_listen));
      common::Result<common::config::ListenAddress> parsed =
          common::config::parseListenAddress(o.metrics_listen);
      if (!parsed.ok()) {
        return common::invalidArgument("--metrics-listen: " + parsed.status().message());
      }
    } else if (arg == "--dashboard-listen") {
      SCALWS_RETURN_IF_ERROR(value(o.dashboard_listen));
      common::Result<common::config::ListenAddress> parsed =
          common::config::parseListenAddress(o.dashboard_listen);
      if (!parsed.ok()) {
        return common::invalidArgument("--dashboard-listen: " + parsed.status().message());
      }
    } else if (arg == "--dashboard-auth") {
      SCALWS_RETURN_IF_ERROR(value(o.dashboard_auth));
      if (o.dashboard_auth.front() != '/') {
        return common::invalidArgument("--dashboard-auth needs an absolute path");
      }
    } else if (arg == "--pool-dir" || arg == "--php-fpm" || arg == "--allow-php-fpm" ||
               arg == "--app-dir" || arg == "--log-dir") {
      std::string path;
      SCALWS_RETURN_IF_ERROR(value(path));
      if (path.front() != '/') return common::invalidArgument(arg + " needs an absolute path");
      if (arg == "--pool-dir") o.pool_dir = path;
      if (arg == "--app-dir") o.app_dir = path;
      if (arg == "--log-dir") o.log_dir = path;
      if (arg == "--php-fpm") o.php_fpm = path;
      if (arg == "--allow-php-fpm") o.allowed_php_fpm.push_back(path);
    } else if (arg == "--pool-log-size" || arg == "--app-log-size") {
      std::string text;
      SCALWS_RETURN_IF_ERROR(value(text));
      common::Result<uint64_t> size = common::config::parseSize(text);
      if (!size.ok() || *size < kMinLogCap) {
        return common::invalidArgument(arg + " needs a size of at least 64K, not '" + text + "'");
      }
      (arg == "--pool-log-size" ? o.pool_log_size : o.app_log_size) = *size;
    } else if (arg == "--scalws-front") {
      SCALWS_RETURN_IF_ERROR(value(o.front_binary));
    } else if (arg == "--front-user") {
      SCALWS_RETURN_IF_ERROR(value(o.front_user));
    } else if (arg == "--front-processes" || arg == "--front-max-waiting") {
      std::string text;
      SCALWS_RETURN_IF_ERROR(value(text));
      bool processes = arg == "--front-processes";
      std::optional<uint64_t> n = common::config::parseCount(text, processes ? 64 : 1'000'000);
      if (!n) {
        return common::invalidArgument(arg + " needs a positive integer" +
                                       (processes ? " up to 64" : "") + ", not '" + text + "'");
      }
      (processes ? o.front_processes : o.front_max_waiting) = static_cast<uint32_t>(*n);
    } else if (arg == "--front-header-timeout") {
      std::string text;
      SCALWS_RETURN_IF_ERROR(value(text));
      common::Result<uint64_t> ms = common::config::parseDurationMs(text);
      if (!ms.ok() || *ms < 100 || *ms > 3'600'000) {
        return common::invalidArgument(
            "--front-header-timeout needs a duration from 100ms to 1h, not '" + text + "'");
      }
      o.front_header_timeout_ms = *ms;
    } else if (arg == "--allow-root-instances") {
      o.allow_root_instances = true;
    } else if (arg == "--crash-limit" || arg == "--crash-window") {
      std::string text;
      SCALWS_RETURN_IF_ERROR(value(text));
      std::optional<uint64_t> n =
          common::config::parseCount(text, arg == "--crash-limit" ? 1'000'000 : 86'400 * 365);
      if (!n) {
        return common::invalidArgument(arg + " needs a positive integer, not '" + text + "'");
      }
      if (arg == "--crash-limit") {
        o.restart.crash_limit = static_cast<uint32_t>(*n);
      } else {
        o.restart.crash_window_ms = *n * 1000;
      }
    } else {
      return common::invalidArgument("unknown argument '" + arg + "'");
    }
  }
  if (!o.dashboard_auth.empty() && o.dashboard_listen.empty()) {
    return common::invalidArgument("--dashboard-auth needs --dashboard-listen");
  }
  if (!o.dashboard_listen.empty() && o.dashboard_auth.empty()) {
    common::Result<common::config::ListenAddress> parsed =
        common::config::parseListenAddress(o.dashboard_listen);
    if (parsed.ok() && !isLoopbackHost(parsed->host, parsed->v6)) {
      return common::invalidArgument("--dashboard-listen " + o.dashboard_listen +
                                     " is not a loopback address: it needs --dashboard-auth");
    }
  }
  return o;
}

}  // namespace scalws::controller
