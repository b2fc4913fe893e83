#include "controller/ctl/ctl_output.h"

#include <time.h>

#include <algorithm>

#include "controller/ctl/ctl_metrics_output.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

std::string str(const Json& j, const char* key, const char* fallback = "-") {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_string()) return it->get<std::string>().empty() ? fallback : it->get<std::string>();
  if (it->is_boolean()) return it->get<bool>() ? "yes" : "no";
  return it->dump();
}

int64_t num(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : 0;
}

std::string line(const std::string& key, const std::string& value) {
  std::string out = key;
  out.resize(std::max<size_t>(key.size() + 1, 14), ' ');
  return out + value + "\n";
}

std::string instanceLine(const Json& r) {
  std::string out = "instance " + str(r, "name") + ": " + str(r, "status");
  std::string reason = str(r, "reason", "");
  if (!reason.empty()) out += " (" + reason + ")";
  out += ", desired " + str(r, "desired") + ", CPUs " + str(r, "assigned_cpus") + ", " +
         std::to_string(num(r, "process_count")) + " process(es)\n";
  return out;
}

std::string eventsTable(const Json& events) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& e : events) {
    rows.push_back({formatTime(num(e, "time_ms")), str(e, "kind"), str(e, "message")});
  }
  return renderTable({"TIME", "EVENT", "MESSAGE"}, rows);
}

std::string renderStatus(const Json& r) {
  std::string out;
  out += line("controller", "pid " + str(r, "pid") + ", up " + formatDuration(num(r, "uptime_ms")) +
                                ", version " + str(r, "version"));
  out += line("state dir", str(r, "state_dir"));
  out += line("socket", str(r, "socket"));
  out += line("host CPUs",
              str(r, "host_cpus") + " (reserved: " + str(r, "reserved_cpus", "none") + ")");
  const Json& c = r.contains("instances") ? r["instances"] : Json::object();
  out +=
      line("instances", std::to_string(num(c, "total")) + ": " + std::to_string(num(c, "running")) +
                            " running, " + std::to_string(num(c, "starting")) + " starting, " +
                            std::to_string(num(c, "stopping")) + " stopping, " +
                            std::to_string(num(c, "stopped")) + " stopped, " +
                            std::to_string(num(c, "failed")) + " failed");
  out += line("processes", std::to_string(num(r, "processes")));
  std::string lines = renderStatusLines(r.value("instance_metrics", Json::array()));
  if (!lines.empty()) out += "\n" + lines;
  return out;
}

std::string renderCpus(const Json& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& c : r.value("cpus", Json::array())) {
    std::string holder = str(c, "exclusive", "");
    std::string state = "exclusive";
    if (holder.empty()) {
      for (const Json& s : c.value("shared", Json::array())) {
        holder += (holder.empty() ? "" : ", ") + s.get<std::string>();
      }
      state = holder.empty() ? "free" : "shared";
    }
    if (!c.value("in_host", true)) state += " (not a host CPU now)";
    rows.push_back({str(c, "cpu"), state, holder.empty() ? "-" : holder});
  }
  return renderTable({"CPU", "STATE", "INSTANCES"}, rows);
}

std::string renderList(const Json& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& i : r.value("instances", Json::array())) {
    rows.push_back({str(i, "name"), str(i, "mode"),
                    str(i, "assigned_cpus") + (i.value("shared_cpus", false) ? " (shared)" : ""),
                    str(i, "user"), str(i, "desired"), str(i, "status"),
                    std::to_string(num(i, "process_count")), str(i, "reason", "")});
  }
  if (rows.empty()) return "no instances\n";
  return renderTable({"NAME", "MODE", "CPUS", "USER", "DESIRED", "STATUS", "PROCS", "REASON"},
                     rows);
}

// What the workers' sandbox enforces, from the report the first worker sent when it
// became ready (every worker of an instance gets the same policy).
std::string sandboxSection(const Json& processes) {
  for (const Json& p : processes) {
    const Json& sb = p.value("sandbox", Json());
    if (!sb.is_object()) continue;
    std::string out = "\nsandbox (reported by pid " + str(p, "pid") + "):\n";
    const Json& id = sb.value("identity", Json::object());
    out += "  user " + id.value("user", std::string("(unchanged)")) + " uid " +
           std::to_string(id.value("uid", 0)) + " gid " + std::to_string(id.value("gid", 0)) +
           ", no_new_privs " + (sb.value("no_new_privs", false) ? "yes" : "no") + "\n";
    const Json& ll = sb.value("landlock", Json::object());
    out += "  landlock ABI " + std::to_string(ll.value("abi", 0)) +
           (ll.value("enforced", false) ? ", enforced" : ", NOT enforced") + "\n";
    for (const Json& path : ll.value("paths", Json::array())) {
      out += "    " + path.value("access", std::string()) + " " +
             path.value("path", std::string()) + "\n";
    }
    std::string ports;
    for (const Json& port : ll.value("tcp_connect_ports", Json::array())) {
      ports += (ports.empty() ? "" : ",") + port.dump();
    }
    out += "    tcp: bind denied, connect to " + (ports.empty() ? std::string("no port") : ports) +
           "\n";
    const Json& sc = sb.value("seccomp", Json::object());
    out += "  seccomp " + std::string(sc.value("enforced", false) ? "enforced" : "NOT enforced") +
           ", refusals " + sc.value("action", std::string()) + ", " +
           std::to_string(sc.value("allowed_syscalls", 0)) + " syscalls allowed\n";
    if (sc.value("udp_datagrams", false)) {
      out += "    udp: HTTP/3 datagrams on the inherited sockets, no UDP socket of its own\n";
    }
    for (const Json& d : sb.value("degraded", Json::array())) {
      out += "  degraded: " + d.get<std::string>() + "\n";
    }
    return out;
  }
  return "";
}

// The proxy's servers as the live workers see them; nothing when the site proxies nothing.
std::string upstreamsSection(const Json& upstreams) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& u : upstreams) {
    for (const Json& s : u.value("servers", Json::array())) {
      std::string state = "up";
      if (num(s, "loops_down") > 0) {
        state = "down since " + formatTime(num(s, "down_since_ms")) + " in " +
                str(s, "loops_down") + " of " + str(s, "loops") + " loop(s)";
      }
      if (s.value("backup", false)) state += " (backup)";
      rows.push_back({str(u, "name"), str(s, "address"), state, str(s, "failures"),
                      str(s, "active"), str(s, "idle"), str(s, "requests"), str(s, "responses_5xx"),
                      str(s, "connect_failures")});
    }
  }
  if (rows.empty()) return "";
  return "\nupstreams:\n" + renderTable({"UPSTREAM", "SERVER", "STATE", "FAILURES", "ACTIVE",
                                         "IDLE", "REQUESTS", "5XX", "CONNECT_FAILURES"},
                                        rows);
}

std::string renderShow(const Json& r) {
  std::string out;
  out += line("name", str(r, "name"));
  out += line("mode", str(r, "mode"));
  out +=
      line("cpus", str(r, "assigned_cpus") + " (" + std::to_string(num(r, "cpus")) + " wanted, " +
                       (r.value("shared_cpus", false) ? "shared" : "exclusive") + ")");
  out += line("user", str(r, "user"));
  out += line("desired", str(r, "desired"));
  std::string status = str(r, "status");
  if (!str(r, "reason", "").empty()) status += ": " + str(r, "reason");
  out += line("status", status);
  out += line("config", str(r, "config_path"));
  const Json& config = r.contains("config") ? r["config"] : Json::object();
  if (config.contains("error")) {
    out += line("", "does not load: " + str(config, "error"));
  } else {
    std::string listen;
    for (const Json& l : config.value("listen", Json::array())) {
      listen += (listen.empty() ? "" : ", ") + l.get<std::string>();
    }
    out += line("listen", listen.empty() ? "-" : listen);
    out += line("routes", std::to_string(num(config, "routes")));
  }
  if (r.value("reload_pending", false)) {
    out += line("", "the stored config differs from the running one: reload to apply it");
  }
  out += line("created", formatTime(num(r, "created_ms")));
  out += line("updated", formatTime(num(r, "updated_ms")));
  std::vector<std::vector<std::string>> procs;
  for (const Json& p : r.value("processes", Json::array())) {
    std::string state = str(p, "state");
    if (p.contains("restart_in_ms")) state += " in " + formatDuration(num(p, "restart_in_ms"));
    if (p.value("attached", false)) state += " (re-attached)";
    procs.push_back({str(p, "slot"), num(p, "pid") == 0 ? "-" : str(p, "pid"), str(p, "cpus"),
                     state, num(p, "started_ms") == 0 ? "-" : formatTime(num(p, "started_ms")),
                     str(p, "restarts")});
  }
  std::vector<std::vector<std::string>> pools;
  for (const Json& p : r.value("php_pools", Json::array())) {
    pools.push_back({str(p, "name"), str(p, "pool"), str(p, "address"),
                     num(p, "max_conns") == 0 ? "-" : str(p, "max_conns"), str(p, "share")});
  }
  for (const Json& n : r.value("unbound_pools", Json::array())) {
    pools.push_back({n.get<std::string>(), "(none assigned)", "-", "-", "-"});
  }
  if (!pools.empty()) {
    out += "\nPHP pools:\n";
    out += renderTable({"NAME", "POOL", "ADDRESS", "MAX_CONNS", "SHARE"}, pools);
  }
  out += "\nprocesses:\n";
  out += procs.empty()
             ? "  none\n"
             : renderTable({"SLOT", "PID", "CPUS", "STATE", "STARTED", "RESTARTS"}, procs);
  out += sandboxSection(r.value("processes", Json::array()));
  out += upstreamsSection(r.value("upstreams", Json::array()));
  out += "\nevents (newest first):\n";
  const Json& events = r.value("events", Json::array());
  out += events.empty() ? "  none\n" : eventsTable(events);
  return out;
}

std::string poolInstance(const Json& p) {
  if (!p.contains("instance") || p["instance"].is_null()) return "-";
  std::string out = str(p, "instance");
  if (str(p, "as") != str(p, "name")) out += " as " + str(p, "as");
  return out;
}

std::string renderPools(const Json& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& p : r.value("pools", Json::array())) {
    const Json& proc = p.contains("process") ? p["process"] : Json(nullptr);
    std::string pid = proc.is_object() && num(proc, "pid") != 0 ? str(proc, "pid") : "-";
    rows.push_back({str(p, "name"), str(p, "kind"), str(p, "address"),
                    num(p, "max_conns") == 0 ? "-" : str(p, "max_conns"), poolInstance(p),
                    str(p, "state"), pid});
  }
  if (rows.empty()) return "no PHP pools\n";
  return renderTable({"NAME", "KIND", "ADDRESS", "MAX_CONNS", "INSTANCE", "STATE", "PID"}, rows);
}

std::string renderPool(const Json& p) {
  std::string out;
  out += line("name", str(p, "name"));
  out += line("kind", str(p, "kind"));
  out += line("address", str(p, "address"));
  out += line("max conns", num(p, "max_conns") == 0 ? "unknown (a connection per request)"
                                                    : str(p, "max_conns"));
  std::string instance = poolInstance(p);
  if (instance != "-" && num(p, "share") > 0) {
    instance += " (" + str(p, "share") + " kept connection(s) per worker loop)";
  }
  out += line("instance", instance);
  if (str(p, "kind") == "managed") {
    out += line("php-fpm", str(p, "php_fpm") + " as " + str(p, "user") + ", " +
                               str(p, "processes") + " process(es)");
    const Json& proc = p.contains("process") ? p["process"] : Json(nullptr);
    std::string state = str(p, "state");
    if (proc.is_object()) {
      if (num(proc, "pid") != 0) state += ", pid " + str(proc, "pid");
      if (proc.value("adopted", false)) state += " (adopted)";
      if (proc.contains("restart_in_ms")) {
        state += " in " + formatDuration(num(proc, "restart_in_ms"));
      }
      state += ", " + str(proc, "restarts") + " restart(s)";
    }
    out += line("state", state);
    if (proc.is_object()) {
      if (!str(proc, "last_exit", "").empty()) out += line("last exit", str(proc, "last_exit"));
      out += line("socket group", str(proc, "socket_group"));
      out += line("config", str(proc, "config_path"));
      out += line("log", str(proc, "log_path"));
    }
  }
  out += line("created", formatTime(num(p, "created_ms")));
  out += line("updated", formatTime(num(p, "updated_ms")));
  return out;
}

std::string renderAssigned(const Json& p) {
  std::string out = "pool " + str(p, "name") + " assigned to instance " + str(p, "instance") +
                    " as " + str(p, "as");
  if (!str(p, "replaced", "").empty()) out += " (replacing pool " + str(p, "replaced") + ")";
  out += "\nrunning workers take it on `scalwsctl instance reload " + str(p, "instance") + "`\n";
  return out;
}

}  // namespace

namespace {

// Columns as a terminal shows them: UTF-8 continuation bytes take no column ("µs").
size_t displayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

}  // namespace

std::string renderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = displayWidth(header[i]);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], displayWidth(row[i]));
    }
  }
  auto render = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : "";
      out += cell;
      if (i + 1 < width.size()) out += std::string(width[i] - displayWidth(cell) + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = render(header);
  for (const auto& row : rows) out += render(row);
  return out;
}

std::string formatTime(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  time_t seconds = static_cast<time_t>(unix_ms / 1000);
  struct tm tm;
  localtime_r(&seconds, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string formatDuration(int64_t ms) {
  if (ms < 0) ms = 0;
  int64_t s = ms / 1000;
  if (s < 60) return s == 0 && ms > 0 ? std::to_string(ms) + "ms" : std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m " + std::to_string(s % 60) + "s";
  if (s < 86400) return std::to_string(s / 3600) + "h " + std::to_string(s % 3600 / 60) + "m";
  return std::to_string(s / 86400) + "d " + std::to_string(s % 86400 / 3600) + "h";
}

std::string renderResult(const std::string& op, const Json& result) {
  if (op == "status") return renderStatus(result);
  if (op == "cpu.list") return renderCpus(result);
  if (op == "instance.list") return renderList(result);
  if (op == "instance.show") return renderShow(result);
  if (op == "instance.logs") {
    const Json& events = result.value("events", Json::array());
    return events.empty() ? "no events\n" : eventsTable(events);
  }
  if (op == "instance.metrics") return renderInstanceMetrics(result);
  if (op == "instance.remove" || op == "pool.remove") return "removed\n";
  if (op == "pool.list") return renderPools(result);
  if (op == "pool.assign") return renderAssigned(result);
  if (op.starts_with("pool.")) return renderPool(result);
  if (result.contains("name")) return instanceLine(result);
  return "done\n";
}

}  // namespace scalws::ctl
