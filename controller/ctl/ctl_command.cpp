#include "controller/ctl/ctl_command.h"

#include <cctype>
#include <charconv>
#include <map>
#include <set>

#include "common/config/php_pool_address.h"
#include "common/config/units.h"
#include "ipc/cache_messages.h"
#include "ipc/ops.h"

namespace scalws::ctl {

using common::Result;

const char* const kCtlUsage =
    "usage: scalwsctl [--socket PATH] [--json] COMMAND\n"
    "  status                               the controller and the host; a line per\n"
    "                                       instance: state, req/s, p99, error rates (~10 s)\n"
    "  cpu list                             CPUs and who holds them\n"
    "  instance list                        every instance\n"
    "  instance show NAME [--events N]      one instance: config, CPUs, processes, events\n"
    "  instance logs NAME [--limit N]       its recent events\n"
    "  instance metrics NAME [--since 5m|1h|24h|7d]\n"
    "                                       requests/s, error rates, latency p50/p90/p99,\n"
    "                                       bytes, connections, cache, PHP waits, CPU, RSS:\n"
    "                                       now (last ~10 s) and over the window (default\n"
    "                                       5m). Latency percentiles are the upper bounds of\n"
    "                                       the histogram's half-octave buckets (x1.41 apart)\n"
    "  instance add NAME --config FILE [--mode multi|single] [--cpus N] [--user USER]\n"
    "                    [--share-user] [--shared-cpus]\n"
    "                                       store a new instance (stopped); it runs as a\n"
    "                                       user of its own (scalws-NAME) unless --user\n"
    "                                       names one (another instance's: --share-user)\n"
    "  instance set NAME --config FILE      replace its config (applied on reload)\n"
    "  instance remove NAME                 stop it and delete it\n"
    "  instance start|stop|restart|reload NAME\n"
    "  instance cache purge NAME (--url URL | --prefix URL | --all) [--cache CACHE]\n"
    "                                       drop cached answers in every worker: one URL as\n"
    "                                       cached (https://host/path?query), the URLs that\n"
    "                                       start with a prefix, or everything\n"
    "  instance cache show NAME             its caches: entries, bytes in memory and on disk,\n"
    "                                       hit rate (last 5 min)\n"
    "  instance reopen-logs [NAME | --all]  reopen access.log and error.log of one running\n"
    "                                       instance, or of all (after logrotate moved them)\n"
    "  pool list                            PHP pools\n"
    "  pool show NAME                       one pool: address, php-fpm, instance\n"
    "  pool add NAME --address unix:/PATH|tcp:HOST:PORT [--max-conns N]\n"
    "                                       register an external PHP-FPM pool\n"
    "  pool add NAME --managed --user USER --processes N [--php-fpm PATH]\n"
    "                                       run php-fpm for it (replies once it accepts)\n"
    "  pool remove NAME                     unregister it (refused while assigned)\n"
    "  pool assign POOL INSTANCE [--as NAME]\n"
    "                                       the instance's php routes call it NAME (default\n"
    "                                       POOL); applied on instance reload\n"
    "  pool release POOL                    unassign it\n"
    "  app list                             Node.js and Python apps\n"
    "  app show NAME                        one app: processes, sockets, sandbox\n"
    "  app add NAME --runtime node --entry FILE --processes N --user USER [--dir DIR]\n"
    "  app add NAME --runtime python --wsgi MODULE:CALLABLE|--asgi MODULE:APP\n"
    "               --dir DIR --processes N --user USER\n"
    "          [--env K=V]... [--writable DIR]... [--connect HOST:PORT]...\n"
    "          [--memory SIZE]              run it sandboxed (replies once it accepts);\n"
    "                                       --memory: a memory cgroup per process\n"
    "  app remove|restart NAME              stop it (and delete it) / start it again\n"
    "  app logs NAME [--limit N]            the end of its stdout and stderr\n"
    "  app assign APP INSTANCE [--as NAME]  the instance's app routes call it NAME\n"
    "  app release APP                      unassign it\n"
    "The socket: --socket, else $SCALWS_SOCKET, else /run/scalws/control.sock.\n"
    "Exit codes: 0 done, 1 the operation failed or was refused, 2 usage error.\n";

std::chrono::milliseconds CtlCommand::timeout() const {
  // A start waits for every worker; a stop for in-flight requests (shutdown timeout).
  return write ? std::chrono::milliseconds(120'000) : std::chrono::milliseconds(15'000);
}

namespace {

common::Status usage(const std::string& message) {
  return common::invalidArgument(message);
}

struct Spec {
  std::string_view op;
  std::vector<std::string> words;  // positional arguments, as the args keys they fill
  bool write;
  std::set<std::string> options;  // the command's own options (beyond --socket, --json)
};

const std::map<std::string, Spec>& commands() {
  static const std::map<std::string, Spec> table = {
      {"status", {ipc::op::kStatus, {}, false, {}}},
      {"cpu list", {ipc::op::kCpuList, {}, false, {}}},
      {"instance list", {ipc::op::kInstanceList, {}, false, {}}},
      {"instance show", {ipc::op::kInstanceShow, {"name"}, false, {"--events"}}},
      {"instance logs", {ipc::op::kInstanceLogs, {"name"}, false, {"--limit"}}},
      {"instance metrics", {ipc::op::kInstanceMetrics, {"name"}, false, {"--since"}}},
      {"instance add",
       {ipc::op::kInstanceAdd,
        {"name"},
        true,
        {"--config", "--mode", "--cpus", "--user", "--share-user", "--shared-cpus"}}},
      {"instance set", {ipc::op::kInstanceSet, {"name"}, true, {"--config"}}},
      {"instance remove", {ipc::op::kInstanceRemove, {"name"}, true, {}}},
      {"instance start", {ipc::op::kInstanceStart, {"name"}, true, {}}},
      {"instance stop", {ipc::op::kInstanceStop, {"name"}, true, {}}},
      {"instance restart", {ipc::op::kInstanceRestart, {"name"}, true, {}}},
      {"instance reload", {ipc::op::kInstanceReload, {"name"}, true, {}}},
      {"instance cache purge",
       {ipc::op::kInstanceCachePurge, {"name"}, true, {"--url", "--prefix", "--all", "--cache"}}},
      {"instance cache show", {ipc::op::kInstanceCacheShow, {"name"}, false, {}}},
      {"instance reopen-logs", {ipc::op::kInstanceReopenLogs, {}, true, {"--all"}}},
      {"pool list", {ipc::op::kPoolList, {}, false, {}}},
      {"pool show", {ipc::op::kPoolShow, {"name"}, false, {}}},
      {"pool add",
       {ipc::op::kPoolAdd,
        {"name"},
        true,
        {"--address", "--max-conns", "--managed", "--user", "--processes", "--php-fpm"}}},
      {"pool remove", {ipc::op::kPoolRemove, {"name"}, true, {}}},
      {"pool assign", {ipc::op::kPoolAssign, {"name", "instance"}, true, {"--as"}}},
      {"pool release", {ipc::op::kPoolRelease, {"name"}, true, {}}},
      {"app list", {ipc::op::kAppList, {}, false, {}}},
      {"app show", {ipc::op::kAppShow, {"name"}, false, {}}},
      {"app add",
       {ipc::op::kAppAdd,
        {"name"},
        true,
        {"--runtime", "--entry", "--wsgi", "--asgi", "--processes", "--user", "--dir", "--env",
         "--writable", "--connect", "--memory"}}},
      {"app remove", {ipc::op::kAppRemove, {"name"}, true, {}}},
      {"app restart", {ipc::op::kAppRestart, {"name"}, true, {}}},
      {"app logs", {ipc::op::kAppLogs, {"name"}, false, {"--limit"}}},
      {"app assign", {ipc::op::kAppAssign, {"name", "instance"}, true, {"--as"}}},
      {"app release", {ipc::op::kAppRelease, {"name"}, true, {}}},
  };
  return table;
}

bool takesValue(const std::string& option) {
  return option != "--shared-cpus" && option != "--managed" && option != "--json" &&
         option != "--share-user" && option != "--all";
}

// The words a command's positional arguments are called in messages.
std::string wordsUsage(const std::string& op, const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    std::string upper = w == "name" && op.starts_with("pool.") ? "pool" : w;
    if (w == "name" && op.starts_with("app.")) upper = "app";
    if (w == "name" && op.starts_with("instance.")) upper = "instance";
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out += (out.empty() ? "" : " ") + upper;
  }
  return out;
}

// pool add: external (--address [--max-conns]) or managed (--managed --user --processes
// [--php-fpm]), never a mix; addresses are checked here, names by the controller.
common::Status parsePoolAdd(const std::map<std::string, std::string>& options, ipc::Json& args) {
  auto get = [&](const char* name) -> const std::string* {
    auto it = options.find(name);
    return it == options.end() ? nullptr : &it->second;
  };
  if (get("--managed") != nullptr) {
    for (const char* no : {"--address", "--max-conns"}) {
      if (get(no) != nullptr) {
        return usage(std::string(no) +
                     " is for external pools; a managed pool gets a socket "
                     "from the controller and max_conns = --processes");
      }
    }
    const std::string* user = get("--user");
    const std::string* processes = get("--processes");
    if (user == nullptr || processes == nullptr) {
      return usage("pool add --managed needs --user USER and --processes N");
    }
    std::optional<uint64_t> n = common::config::parseCount(*processes, 1024);
    if (!n) return usage("--processes needs a count from 1 to 1024");
    args["managed"] = true;
    args["user"] = *user;
    args["processes"] = *n;
    if (const std::string* php_fpm = get("--php-fpm")) {
      if (php_fpm->front() != '/') return usage("--php-fpm needs an absolute path");
      args["php_fpm"] = *php_fpm;
    }
    return common::okStatus();
  }
  for (const char* no : {"--user", "--processes", "--php-fpm"}) {
    if (get(no) != nullptr) return usage(std::string(no) + " is for managed pools (--managed)");
  }
  const std::string* address = get("--address");
  if (address == nullptr) {
    return usage("pool add needs --address unix:/PATH|tcp:HOST:PORT, or --managed");
  }
  common::config::PhpPoolConfig parsed;
  common::Status valid = common::config::parsePhpPoolAddress(*address, parsed);
  if (!valid.ok()) return usage("--address: " + valid.message());
  args["address"] = *address;
  if (const std::string* max_conns = get("--max-conns")) {
    std::optional<uint64_t> n = common::config::parseCount(*max_conns, 65535);
    if (!n) return usage("--max-conns needs a count from 1 to 65535");
    args["max_conns"] = *n;
  }
  return common::okStatus();
}

// instance cache purge: exactly one of --url URL, --prefix PREFIX, --all; the URL as the
// cache keys it (checked here by the message's own decoder).
common::Status parseCachePurge(const std::map<std::string, std::string>& options, ipc::Json& args) {
  ipc::CachePurge purge;
  purge.instance = args["name"].get<std::string>();
  int scopes = 0;
  for (const auto& [option, scope] : {std::pair{"--url", ipc::CachePurge::Scope::kUrl},
                                      std::pair{"--prefix", ipc::CachePurge::Scope::kPrefix},
                                      std::pair{"--all", ipc::CachePurge::Scope::kAll}}) {
    auto it = options.find(option);
    if (it == options.end()) continue;
    ++scopes;
    purge.scope = scope;
    purge.target = it->second;
  }
  if (scopes != 1) {
    return usage("instance cache purge needs one of --url URL, --prefix URL, --all");
  }
  if (auto it = options.find("--cache"); it != options.end()) purge.cache = it->second;
  Result<ipc::CachePurge> checked = ipc::CachePurge::decode(purge.encode());
  if (!checked.ok()) return usage("instance cache purge: " + checked.status().message());
  args = checked->encode();
  return common::okStatus();
}

bool repeatable(const std::string& option) {
  return option == "--env" || option == "--writable" || option == "--connect";
}

// app add: the runtime's own options, counts and sizes checked here, the rest by the
// controller (app_spec.h).
common::Status parseAppAdd(const std::map<std::string, std::string>& options,
                           const std::map<std::string, std::vector<std::string>>& lists,
                           ipc::Json& args) {
  auto get = [&](const char* name) -> const std::string* {
    auto it = options.find(name);
    return it == options.end() ? nullptr : &it->second;
  };
  const std::string* runtime = get("--runtime");
  if (runtime == nullptr) return usage("app add needs --runtime node|python");
  const std::string* wsgi = get("--wsgi");
  const std::string* asgi = get("--asgi");
  if (*runtime == "node") {
    if (wsgi != nullptr || asgi != nullptr)
      return usage("--wsgi and --asgi are for --runtime python");
    const std::string* entry = get("--entry");
    if (entry == nullptr) return usage("app add --runtime node needs --entry FILE");
    args["runtime"] = "node";
    args["entry"] = *entry;
  } else if (*runtime == "python") {
    if (get("--entry") != nullptr) return usage("--entry is for --runtime node");
    if ((wsgi == nullptr) == (asgi == nullptr)) {
      return usage(
          "app add --runtime python needs one of --wsgi MODULE:CALLABLE, --asgi MODULE:APP");
    }
    args["runtime"] = wsgi != nullptr ? "python-wsgi" : "python-asgi";
    args["target"] = wsgi != nullptr ? *wsgi : *asgi;
  } else {
    return usage("--runtime must be node or python, not '" + *runtime + "'");
  }
  const std::string* processes = get("--processes");
  const std::string* user = get("--user");
  if (processes == nullptr || user == nullptr) {
    return usage("app add needs --processes N and --user USER");
  }
  std::optional<uint64_t> n = common::config::parseCount(*processes, 256);
  if (!n) return usage("--processes needs a count from 1 to 256");
  args["processes"] = *n;
  args["user"] = *user;
  if (const std::string* dir = get("--dir")) args["dir"] = *dir;
  if (const std::string* memory = get("--memory")) {
    Result<uint64_t> bytes = common::config::parseSize(*memory);
    if (!bytes.ok() || *bytes == 0) return usage("--memory needs a size such as 512m");
    args["memory_bytes"] = *bytes;
  }
  static const std::pair<const char*, const char*> kLists[] = {
      {"--env", "env"}, {"--writable", "writable"}, {"--connect", "connect"}};
  for (const auto& [option, key] : kLists) {
    auto it = lists.find(option);
    args[key] = it == lists.end() ? std::vector<std::string>() : it->second;
  }
  return common::okStatus();
}

}  // namespace

Result<int64_t> parseSince(const std::string& text) {
  constexpr int64_t kMin = 10'000;
  constexpr int64_t kMax = 31LL * 24 * 3600 * 1000;
  auto bad = [&] {
    return usage("--since needs a duration from 10s to 31d (e.g. 5m, 1h, 24h, 7d), not '" + text +
                 "'");
  };
  if (text.size() < 2) return bad();
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1000;
      break;
    case 'm':
      unit = 60'000;
      break;
    case 'h':
      unit = 3'600'000;
      break;
    case 'd':
      unit = 86'400'000;
      break;
    default:
      return bad();
  }
  std::optional<uint64_t> n =
      common::config::parseCount(text.substr(0, text.size() - 1), 1'000'000);
  if (!n) return bad();
  int64_t ms = static_cast<int64_t>(*n) * unit;
  if (ms < kMin || ms > kMax) return bad();
  return ms;
}

Result<CtlCommand> parseCtlArgs(const std::vector<std::string>& args, const char* env_socket) {
  CtlCommand cmd;
  std::vector<std::string> words;
  std::map<std::string, std::string> options;
  std::map<std::string, std::vector<std::string>> lists;  // repeatable options
  std::string socket;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h" || a == "help") {
      cmd.help = true;
      return cmd;
    }
    if (a == "--version") {
      cmd.version = true;
      return cmd;
    }
    if (a == "--json") {
      cmd.json = true;
    } else if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a;
      std::string value;
      size_t eq = a.find('=');
      bool inline_value = eq != std::string::npos;
      if (inline_value) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
      }
      if (repeatable(name)) {
        if (!inline_value) {
          if (i + 1 >= args.size()) return usage(name + " needs a value");
          value = args[++i];
        }
        if (value.empty()) return usage(name + " needs a non-empty value");
        lists[name].push_back(value);
        options[name] = value;
        continue;
      }
      if (options.count(name) != 0 || (name == "--socket" && !socket.empty())) {
        return usage(name + " given twice");
      }
      if (!takesValue(name)) {
        if (inline_value) return usage(name + " takes no value");
        options[name] = "";
        continue;
      }
      if (!inline_value) {
        if (i + 1 >= args.size()) return usage(name + " needs a value");
        value = args[++i];
      }
      if (value.empty()) return usage(name + " needs a non-empty value");
      if (name == "--socket") {
        socket = value;
      } else {
        options[name] = value;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return usage("unknown option " + a);
    } else {
      words.push_back(a);
    }
  }
  cmd.socket = !socket.empty()                                ? socket
               : env_socket != nullptr && *env_socket != '\0' ? env_socket
                                                              : kDefaultSocket;
  if (words.empty()) return usage("no command given");

  const Spec* spec = nullptr;
  size_t used = 0;
  for (size_t n = std::min<size_t>(3, words.size()); n >= 1 && spec == nullptr; --n) {
    std::string key = words[0];
    for (size_t i = 1; i < n; ++i) key += " " + words[i];
    auto it = commands().find(key);
    if (it != commands().end()) {
      spec = &it->second;
      used = n;
    }
  }
  if (spec == nullptr) {
    std::string what = words[0] + (words.size() > 1 ? " " + words[1] : "");
    return usage("unknown command '" + what + "'");
  }
  cmd.op = std::string(spec->op);
  cmd.write = spec->write;
  if (words.size() < used + spec->words.size()) {
    return usage(cmd.op + " needs " + wordsUsage(cmd.op, spec->words));
  }
  for (const std::string& key : spec->words) cmd.args[key] = words[used++];
  if (cmd.op == ipc::op::kInstanceReopenLogs && words.size() == used + 1) {
    // One instance, or (--all, or no name) every running one.
    if (options.count("--all") != 0) {
      return usage("instance reopen-logs takes NAME or --all, not both");
    }
    cmd.args["name"] = words[used++];
  }
  if (words.size() > used) return usage("unexpected argument '" + words[used] + "'");
  for (const auto& [name, value] : options) {
    if (spec->options.count(name) == 0) {
      return usage(std::string(takesValue(name) ? "option " : "") + name + " does not go with '" +
                   cmd.op + "'");
    }
  }

  auto get = [&](const char* name) -> const std::string* {
    auto it = options.find(name);
    return it == options.end() ? nullptr : &it->second;
  };
  if (cmd.op == ipc::op::kInstanceAdd || cmd.op == ipc::op::kInstanceSet) {
    const std::string* config = get("--config");
    if (config == nullptr) return usage(cmd.op + " needs --config FILE");
    cmd.config_file = *config;
  }
  if (const std::string* mode = get("--mode")) {
    if (*mode != "multi" && *mode != "single") {
      return usage("--mode must be multi or single, not '" + *mode + "'");
    }
    cmd.args["mode"] = *mode;
  }
  if (const std::string* cpus = get("--cpus")) {
    std::optional<uint64_t> n = common::config::parseCount(*cpus, 4096);
    if (!n) return usage("--cpus needs a count from 1 to 4096");
    cmd.args["cpus"] = *n;
  }
  if (cmd.op == ipc::op::kAppAdd) {
    common::Status app = parseAppAdd(options, lists, cmd.args);
    if (!app.ok()) return app;
    return cmd;
  }
  if (cmd.op == ipc::op::kPoolAdd) {
    common::Status pool = parsePoolAdd(options, cmd.args);
    if (!pool.ok()) return pool;
    return cmd;
  }
  if (cmd.op == ipc::op::kInstanceCachePurge) {
    common::Status purge = parseCachePurge(options, cmd.args);
    if (!purge.ok()) return purge;
    return cmd;
  }
  if (cmd.op == ipc::op::kInstanceReopenLogs) {
    if (!cmd.args.contains("name")) cmd.args["all"] = true;
    return cmd;
  }
  if (const std::string* as = get("--as")) cmd.args["as"] = *as;
  if (const std::string* user = get("--user")) cmd.args["user"] = *user;
  if (get("--shared-cpus") != nullptr) cmd.args["shared_cpus"] = true;
  if (get("--share-user") != nullptr) cmd.args["share_user"] = true;
  if (const std::string* since = get("--since")) {
    Result<int64_t> ms = parseSince(*since);
    if (!ms.ok()) return ms.status();
    cmd.args["since_ms"] = *ms;
  }
  for (const char* name : {"--events", "--limit"}) {
    if (const std::string* value = get(name)) {
      std::optional<uint64_t> n = common::config::parseCount(*value, 1000);
      if (!n) {
        return usage(std::string(name) + " needs a count from 1 to 1000");
      }
      cmd.args[name == std::string("--events") ? "events" : "limit"] = *n;
    }
  }
  return cmd;
}

}  // namespace scalws::ctl
