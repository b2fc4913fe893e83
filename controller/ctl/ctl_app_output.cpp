#include "controller/ctl/ctl_app_output.h"

#include "controller/ctl/ctl_format.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

std::string pids(const Json& a) {
  std::string out;
  for (const Json& p : array(object(a, "status"), "processes")) {
    if (integer(p, "pid") == 0) continue;
    out += (out.empty() ? "" : ",") + text(p, "pid");
  }
  return out.empty() ? "-" : out;
}

// "12.0 MiB used (peak 60.1 MiB) of 64.0 MiB, 1 OOM kill(s)[, 1 thrash kill(s)], cgroup PATH":
// the figures of the process's cgroup, which count every process of it (gunicorn's workers
// too).
std::string memoryLine(const Json& m) {
  std::string line;
  if (m.contains("current_bytes")) {
    line = formatBytes(static_cast<double>(unsignedAt(m, "current_bytes"))) + " used";
    if (unsignedAt(m, "peak_bytes") != 0) {
      line += " (peak " + formatBytes(static_cast<double>(unsignedAt(m, "peak_bytes"))) + ")";
    }
    if (unsignedAt(m, "limit_bytes") != 0) {
      line += " of " + formatBytes(static_cast<double>(unsignedAt(m, "limit_bytes")));
    }
  } else {
    line = "cgroup unreadable";
  }
  line += ", " + text(m, "oom_kills") + " OOM kill(s)";
  if (unsignedAt(m, "thrash_kills") != 0)
    line += ", " + text(m, "thrash_kills") + " thrash kill(s)";
  line += ", cgroup " + text(m, "cgroup");
  if (m.contains("in_cgroup") && !flag(m, "in_cgroup")) line += " (the process is NOT in it)";
  return line;
}

}  // namespace

std::string renderApps(const Json& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& a : array(r, "apps")) {
    const Json& spec = object(a, "spec");
    rows.push_back({text(a, "name"), text(spec, "runtime"), text(spec, "user"),
                    text(spec, "processes"), assignedInstance(a), text(a, "state"), pids(a)});
  }
  if (rows.empty()) return "no apps\n";
  return renderTable({"NAME", "RUNTIME", "USER", "PROCESSES", "INSTANCE", "STATE", "PIDS"}, rows);
}

std::string renderApp(const Json& a) {
  const Json& spec = object(a, "spec");
  std::string out;
  out += labelled("name", text(a, "name"));
  std::string runs = text(spec, "runtime") + " ";
  runs += text(spec, "entry", "").empty() ? text(spec, "target") : text(spec, "entry");
  out += labelled("runs", runs + " in " + text(spec, "dir"));
  out += labelled("as", text(spec, "user") + ", " + text(spec, "processes") + " process(es)");
  out += labelled("instance", assignedInstance(a));
  out += labelled("state", text(a, "state"));
  if (unsignedAt(spec, "memory_bytes") != 0) {
    out += labelled("memory limit",
                    formatBytes(static_cast<double>(unsignedAt(spec, "memory_bytes"))) +
                        " per process (group)");
  }
  const Json& status = object(a, "status");
  for (const Json& p : array(status, "processes")) {
    std::string line = text(p, "state");
    if (integer(p, "pid") != 0) line += ", pid " + text(p, "pid");
    if (flag(p, "adopted")) line += " (adopted)";
    line += ", " + text(p, "restarts") + " restart(s)";
    if (integer(p, "rss_bytes") != 0) {
      line += ", rss " + std::to_string(integer(p, "rss_bytes") >> 20) + " MiB";
    }
    line += ", " + text(p, "socket");
    out += labelled("process " + text(p, "index"), line);
    if (!text(p, "last_exit", "").empty()) out += labelled("  last exit", text(p, "last_exit"));
    const Json& memory = object(p, "memory");
    if (!memory.empty()) out += labelled("  memory", memoryLine(memory));
    const Json& checked = object(p, "checked");
    if (!checked.empty()) out += labelled("  in /proc", processFactsText(checked));
  }
  if (!text(status, "cgroups", "").empty()) out += labelled("cgroups", text(status, "cgroups"));
  for (const Json& s : array(a, "upstream")) out += labelled("upstream", s.get<std::string>());
  if (!status.empty()) out += labelled("log", text(status, "log_path"));
  for (const Json& line : array(status, "sandbox"))
    out += labelled("sandbox", line.get<std::string>());
  out += labelled("created", formatTime(integer(a, "created_ms")));
  return out;
}

std::string renderAppLogs(const Json& r) {
  std::string out;
  for (const Json& line : array(r, "lines")) out += escapeText(line.get<std::string>()) + "\n";
  return out;
}

}  // namespace scalws::ctl
