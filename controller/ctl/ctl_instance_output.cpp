#include "controller/ctl/ctl_instance_output.h"

#include "controller/ctl/ctl_format.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

std::string joined(const Json& list, const char* separator) {
  std::string out;
  for (const Json& v : list) out += (out.empty() ? "" : separator) + textOf(v);
  return out;
}

std::string eventsTable(const Json& events) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& e : events) {
    rows.push_back({formatTime(integer(e, "time_ms")), text(e, "kind"), text(e, "message")});
  }
  return renderTable({"TIME", "EVENT", "MESSAGE"}, rows);
}

// What the controller read itself in each worker's /proc/PID/status: fact.
std::string checkedSection(const Json& processes) {
  std::string out;
  for (const Json& p : processes) {
    const Json& c = object(p, "checked");
    if (c.empty()) continue;
    out += "  pid " + text(p, "pid") + ": ";
    if (c.contains("error")) {
      out += text(c, "error") + "\n";
      continue;
    }
    out += processFactsText(c) + "\n";
  }
  return out.empty() ? "" : "\nsandbox, as the controller reads it in /proc:\n" + out;
}

// What the workers say their sandbox enforces: the report the first worker sent when it
// became ready (every worker of an instance gets the same policy). Their word, not a fact.
std::string reportedSection(const Json& processes) {
  for (const Json& p : processes) {
    const Json& sb = object(p, "sandbox");
    if (sb.empty()) continue;
    std::string out = "\nsandbox, as worker pid " + text(p, "pid") + " reports it:\n";
    const Json& id = object(sb, "identity");
    out += "  user " + text(id, "user", "(unchanged)") + " uid " + text(id, "uid", "0") + " gid " +
           text(id, "gid", "0") + ", no_new_privs " + (flag(sb, "no_new_privs") ? "yes" : "no") +
           "\n";
    const Json& ll = object(sb, "landlock");
    out += "  landlock ABI " + text(ll, "abi", "0") +
           (flag(ll, "enforced") ? ", enforced" : ", NOT enforced") + "\n";
    for (const Json& path : array(ll, "paths")) {
      out += "    " + text(path, "access", "") + " " + text(path, "path", "") + "\n";
    }
    std::string ports = joined(array(ll, "tcp_connect_ports"), ",");
    out += "    tcp: bind denied, connect to " + (ports.empty() ? std::string("no port") : ports) +
           "\n";
    const Json& sc = object(sb, "seccomp");
    out += "  seccomp " + std::string(flag(sc, "enforced") ? "enforced" : "NOT enforced") +
           ", refusals " + text(sc, "action", "") + ", " + text(sc, "allowed_syscalls", "0") +
           " syscalls allowed\n";
    if (flag(sc, "udp_datagrams")) {
      out += "    udp: HTTP/3 datagrams on the inherited sockets, no UDP socket of its own\n";
    }
    for (const Json& d : array(sb, "degraded")) out += "  degraded: " + textOf(d) + "\n";
    return out;
  }
  return "";
}

// The proxy's servers as the live workers see them; nothing when the site proxies nothing.
std::string upstreamsSection(const Json& upstreams) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& u : upstreams) {
    for (const Json& s : array(u, "servers")) {
      std::string state = "up";
      if (integer(s, "loops_down") > 0) {
        state = "down since " + formatTime(integer(s, "down_since_ms")) + " in " +
                text(s, "loops_down") + " of " + text(s, "loops") + " loop(s)";
      }
      if (flag(s, "backup")) state += " (backup)";
      rows.push_back({text(u, "name"), text(s, "address"), state, text(s, "failures"),
                      text(s, "active"), text(s, "idle"), text(s, "requests"),
                      text(s, "responses_5xx"), text(s, "connect_failures")});
    }
  }
  if (rows.empty()) return "";
  return "\nupstreams:\n" + renderTable({"UPSTREAM", "SERVER", "STATE", "FAILURES", "ACTIVE",
                                         "IDLE", "REQUESTS", "5XX", "CONNECT_FAILURES"},
                                        rows);
}

// Its caches' sizes and the apps assigned to it; nothing when it has none.
std::string cachesAndAppsSection(const Json& r) {
  std::string out;
  std::vector<std::vector<std::string>> caches;
  for (const Json& c : array(r, "caches")) {
    caches.push_back({text(c, "name"), text(c, "entries"),
                      formatBytes(static_cast<double>(unsignedAt(c, "memory_bytes"))),
                      formatBytes(static_cast<double>(unsignedAt(c, "disk_bytes")))});
  }
  if (!caches.empty()) {
    out += "\ncaches:\n" + renderTable({"CACHE", "ENTRIES", "MEMORY", "DISK"}, caches);
  }
  std::vector<std::vector<std::string>> apps;
  for (const Json& a : array(r, "apps")) {
    apps.push_back({text(a, "name"), text(a, "as"), text(a, "state")});
  }
  for (const Json& n : array(r, "unbound_apps"))
    apps.push_back({"(none assigned)", textOf(n), "-"});
  if (!apps.empty()) out += "\napps:\n" + renderTable({"APP", "AS", "STATE"}, apps);
  return out;
}

}  // namespace

std::string renderInstanceLine(const Json& r) {
  std::string out = "instance " + text(r, "name") + ": " + text(r, "status");
  std::string reason = text(r, "reason", "");
  if (!reason.empty()) out += " (" + reason + ")";
  out += ", desired " + text(r, "desired") + ", CPUs " + text(r, "assigned_cpus") + ", " +
         std::to_string(integer(r, "process_count")) + " process(es)\n";
  return out;
}

std::string renderEvents(const Json& r) {
  const Json& events = array(r, "events");
  return events.empty() ? "no events\n" : eventsTable(events);
}

std::string renderControllerStatus(const Json& r) {
  std::string out;
  out += labelled("controller", "pid " + text(r, "pid") + ", up " +
                                    formatDuration(integer(r, "uptime_ms")) + ", version " +
                                    text(r, "version"));
  out += labelled("state dir", text(r, "state_dir"));
  out += labelled("socket", text(r, "socket"));
  out += labelled("host CPUs",
                  text(r, "host_cpus") + " (reserved: " + text(r, "reserved_cpus", "none") + ")");
  const Json& c = object(r, "instances");
  auto n = [&](const char* key) { return std::to_string(integer(c, key)); };
  out += labelled("instances", n("total") + ": " + n("running") + " running, " + n("starting") +
                                   " starting, " + n("stopping") + " stopping, " + n("stopped") +
                                   " stopped, " + n("failed") + " failed");
  out += labelled("processes", std::to_string(integer(r, "processes")));
  if (r.contains("state_disk") && r["state_disk"].is_object()) {
    const Json& d = r["state_disk"];
    std::string free = formatBytes(static_cast<double>(integer(d, "free_bytes"))) + " free";
    out +=
        labelled("state disk", flag(d, "full", false) ? "FULL (" + free + "): " + text(d, "message")
                                                      : "ok (" + free + ")");
  }
  return out;
}

std::string renderCpus(const Json& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& c : array(r, "cpus")) {
    std::string holder = text(c, "exclusive", "");
    std::string state = "exclusive";
    if (holder.empty()) {
      holder = joined(array(c, "shared"), ", ");
      state = holder.empty() ? "free" : "shared";
    }
    if (!flag(c, "in_host", true)) state += " (not a host CPU now)";
    rows.push_back({text(c, "cpu"), state, holder.empty() ? "-" : holder});
  }
  return renderTable({"CPU", "STATE", "INSTANCES"}, rows);
}

std::string renderInstanceList(const Json& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& i : array(r, "instances")) {
    rows.push_back({text(i, "name"), text(i, "mode"),
                    text(i, "assigned_cpus") + (flag(i, "shared_cpus") ? " (shared)" : ""),
                    text(i, "user"), text(i, "desired"), text(i, "status"),
                    std::to_string(integer(i, "process_count")), text(i, "reason", "")});
  }
  if (rows.empty()) return "no instances\n";
  return renderTable({"NAME", "MODE", "CPUS", "USER", "DESIRED", "STATUS", "PROCS", "REASON"},
                     rows);
}

std::string renderInstanceShow(const Json& r) {
  std::string out;
  out += labelled("name", text(r, "name"));
  out += labelled("mode", text(r, "mode"));
  out +=
      labelled("cpus", text(r, "assigned_cpus") + " (" + std::to_string(integer(r, "cpus")) +
                           " wanted, " + (flag(r, "shared_cpus") ? "shared" : "exclusive") + ")");
  out += labelled("user", text(r, "user"));
  out += labelled("desired", text(r, "desired"));
  std::string status = text(r, "status");
  if (!text(r, "reason", "").empty()) status += ": " + text(r, "reason");
  out += labelled("status", status);
  out += labelled("config", text(r, "config_path"));
  const Json& config = object(r, "config");
  if (config.contains("error")) {
    out += labelled("", "does not load: " + text(config, "error"));
  } else {
    std::string listen = joined(array(config, "listen"), ", ");
    out += labelled("listen", listen.empty() ? "-" : listen);
    out += labelled("routes", std::to_string(integer(config, "routes")));
  }
  if (flag(r, "reload_pending")) {
    out += labelled("", "the stored config differs from the running one: reload to apply it");
  }
  out += labelled("created", formatTime(integer(r, "created_ms")));
  out += labelled("updated", formatTime(integer(r, "updated_ms")));
  std::vector<std::vector<std::string>> procs;
  for (const Json& p : array(r, "processes")) {
    std::string state = text(p, "state");
    if (p.contains("restart_in_ms")) state += " in " + formatDuration(integer(p, "restart_in_ms"));
    if (flag(p, "attached")) state += " (re-attached)";
    procs.push_back({text(p, "slot"), integer(p, "pid") == 0 ? "-" : text(p, "pid"),
                     text(p, "cpus"), state,
                     integer(p, "started_ms") == 0 ? "-" : formatTime(integer(p, "started_ms")),
                     text(p, "restarts")});
  }
  std::vector<std::vector<std::string>> pools;
  for (const Json& p : array(r, "php_pools")) {
    pools.push_back({text(p, "name"), text(p, "pool"), text(p, "address"),
                     integer(p, "max_conns") == 0 ? "-" : text(p, "max_conns"), text(p, "share")});
  }
  for (const Json& n : array(r, "unbound_pools")) {
    pools.push_back({textOf(n), "(none assigned)", "-", "-", "-"});
  }
  if (!pools.empty()) {
    out += "\nPHP pools:\n";
    out += renderTable({"NAME", "POOL", "ADDRESS", "MAX_CONNS", "SHARE"}, pools);
  }
  out += "\nprocesses:\n";
  out += procs.empty()
             ? "  none\n"
             : renderTable({"SLOT", "PID", "CPUS", "STATE", "STARTED", "RESTARTS"}, procs);
  out += checkedSection(array(r, "processes"));
  out += reportedSection(array(r, "processes"));
  out += upstreamsSection(array(r, "upstreams"));
  out += cachesAndAppsSection(r);
  out += "\nevents (newest first):\n";
  const Json& events = array(r, "events");
  out += events.empty() ? "  none\n" : eventsTable(events);
  return out;
}

}  // namespace scalws::ctl
