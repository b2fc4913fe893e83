#include "controller/ctl/ctl_shared_output.h"

#include <vector>

#include "controller/ctl/ctl_format.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

std::string names(const Json& list) {
  std::string out;
  for (const Json& n : list) out += (out.empty() ? "" : " ") + textOf(n);
  return out.empty() ? "-" : out;
}

std::string fronts(const Json& list) {
  std::string out;
  for (const Json& f : list) {
    std::string one = text(f, "state");
    if (integer(f, "pid") != 0) one += " (pid " + text(f, "pid") + ")";
    if (integer(f, "restarts") != 0) one += ", " + text(f, "restarts") + " restart(s)";
    out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::string renderSharedAddresses(const Json& list) {
  if (!list.is_array() || list.empty()) return "";
  std::string out;
  for (const Json& a : list) {
    const Json& c = object(a, "counters");
    out += "\nshared address " + text(a, "address") +
           (flag(a, "tls") ? (flag(a, "http3") ? " (TLS and QUIC, by SNI)" : " (TLS, by SNI)")
                           : " (by Host)") +
           "\n";
    out += labelled("fronts", fronts(array(a, "fronts")));
    out += labelled("connections", text(c, "accepted") + " accepted, " + text(c, "handed_off") +
                                       " handed over, " + text(c, "waiting") + " waiting now");
    out += labelled("refused", text(c, "unknown_name") + " unknown name, " +
                                   text(c, "unavailable") + " not running, " +
                                   text(c, "queue_full") + " queue full, " + text(c, "invalid") +
                                   " not TLS/HTTP, " + text(c, "h2c_refused") + " h2c");
    out += labelled(
        "closed", text(c, "peek_timeouts") + " header timeout, " + text(c, "evicted") + " evicted");
    if (flag(a, "http3")) {
      out += labelled("quic", text(c, "quic_routed") + " connections routed, " +
                                  text(c, "quic_forwarded") + " datagrams passed on, " +
                                  text(c, "quic_dropped") + " dropped");
    }
    std::vector<std::vector<std::string>> rows;
    for (const Json& i : array(a, "instances")) {
      rows.push_back({text(i, "name"), names(array(i, "names")), flag(i, "default") ? "yes" : "-",
                      flag(i, "running") ? text(i, "workers_up") + " up" : "stopped",
                      text(i, "handoffs")});
    }
    out += renderTable({"INSTANCE", "NAMES", "DEFAULT", "WORKERS", "HANDED"}, rows);
  }
  return out;
}

std::string renderSharedHandoffs(const Json& list) {
  if (!list.is_array() || list.empty()) return "";
  std::string out;
  for (const Json& s : list) {
    out += "shared address " + text(s, "address") + ": " + text(s, "handoffs") +
           " connection(s) handed to it since its fronts started\n";
  }
  return out;
}

}  // namespace scalws::ctl
