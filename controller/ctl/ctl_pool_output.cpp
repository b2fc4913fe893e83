#include "controller/ctl/ctl_pool_output.h"

#include "controller/ctl/ctl_format.h"

namespace scalws::ctl {

using ipc::Json;

std::string renderPools(const Json& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& p : array(r, "pools")) {
    const Json& proc = object(p, "process");
    std::string pid = integer(proc, "pid") != 0 ? text(proc, "pid") : "-";
    rows.push_back({text(p, "name"), text(p, "kind"), text(p, "address"),
                    integer(p, "max_conns") == 0 ? "-" : text(p, "max_conns"), assignedInstance(p),
                    text(p, "state"), pid});
  }
  if (rows.empty()) return "no PHP pools\n";
  return renderTable({"NAME", "KIND", "ADDRESS", "MAX_CONNS", "INSTANCE", "STATE", "PID"}, rows);
}

std::string renderPool(const Json& p) {
  std::string out;
  out += labelled("name", text(p, "name"));
  out += labelled("kind", text(p, "kind"));
  out += labelled("address", text(p, "address"));
  out += labelled("max conns", integer(p, "max_conns") == 0 ? "unknown (a connection per request)"
                                                            : text(p, "max_conns"));
  std::string instance = assignedInstance(p);
  if (instance != "-" && integer(p, "share") > 0) {
    instance += " (" + text(p, "share") + " kept connection(s) per worker loop)";
  }
  out += labelled("instance", instance);
  if (text(p, "kind") == "managed") {
    out += labelled("php-fpm", text(p, "php_fpm") + " as " + text(p, "user") + ", " +
                                   text(p, "processes") + " process(es)");
    const Json& proc = object(p, "process");
    std::string state = text(p, "state");
    if (!proc.empty()) {
      if (integer(proc, "pid") != 0) state += ", pid " + text(proc, "pid");
      if (flag(proc, "adopted")) state += " (adopted)";
      if (proc.contains("restart_in_ms")) {
        state += " in " + formatDuration(integer(proc, "restart_in_ms"));
      }
      state += ", " + text(proc, "restarts") + " restart(s)";
    }
    out += labelled("state", state);
    if (!proc.empty()) {
      if (!text(proc, "last_exit", "").empty())
        out += labelled("last exit", text(proc, "last_exit"));
      out += labelled("socket group", text(proc, "socket_group"));
      out += labelled("config", text(proc, "config_path"));
      out += labelled("log", text(proc, "log_path"));
    }
  }
  out += labelled("created", formatTime(integer(p, "created_ms")));
  out += labelled("updated", formatTime(integer(p, "updated_ms")));
  return out;
}

std::string renderAssigned(const Json& p) {
  std::string out = "pool " + text(p, "name") + " assigned to instance " + text(p, "instance") +
                    " as " + text(p, "as");
  if (!text(p, "replaced", "").empty()) out += " (replacing pool " + text(p, "replaced") + ")";
  out += "\nrunning workers take it on `scalwsctl instance reload " + text(p, "instance") + "`\n";
  return out;
}

}  // namespace scalws::ctl
