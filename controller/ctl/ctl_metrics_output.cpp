#include "controller/ctl/ctl_metrics_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "controller/ctl/ctl_format.h"
#include "controller/ctl/ctl_shared_output.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

std::string rate(double v) {
  return formatFixed(v, v < 10 ? 2 : 1);
}

uint64_t count(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  return 0;
}

std::string actions(const Json& by_action) {
  std::string out;
  for (const auto& [name, value] : by_action.items()) {
    if (count(value) == 0) continue;
    out += (out.empty() ? "" : ", ") + escapeText(name) + " " + std::to_string(count(value));
  }
  return out.empty() ? "-" : out;
}

std::string classes(const Json& by_class) {
  std::string out;
  for (const char* c : {"1xx", "2xx", "3xx", "4xx", "5xx"}) {
    uint64_t n = unsignedAt(by_class, c);
    if (n == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(c) + " " + std::to_string(n);
  }
  return out.empty() ? "-" : out;
}

// One figure per row, for the "now" and the window columns.
std::vector<std::vector<std::string>> rows(const Json& now, const Json& win) {
  std::vector<std::vector<std::string>> out;
  auto row = [&](const std::string& label, auto cell) {
    out.push_back({label, cell(now), cell(win)});
  };
  row("requests", [](const Json& f) { return std::to_string(unsignedAt(f, "requests")); });
  row("requests/s", [](const Json& f) { return rate(number(f, "requests_per_s")); });
  row("by status", [](const Json& f) { return classes(object(f, "by_class")); });
  row("by action", [](const Json& f) { return actions(object(f, "by_action")); });
  row("errors 4xx",
      [](const Json& f) { return formatPercent(number(object(f, "error_rate"), "4xx")); });
  row("errors 5xx",
      [](const Json& f) { return formatPercent(number(object(f, "error_rate"), "5xx")); });
  for (const char* p : {"p50", "p90", "p99"}) {
    row(std::string("latency ") + p,
        [p](const Json& f) { return formatLatencyUs(unsignedAt(object(f, "latency_us"), p)); });
  }
  row("bytes in/s", [](const Json& f) { return formatBytes(number(f, "bytes_in_per_s")); });
  row("bytes out/s", [](const Json& f) { return formatBytes(number(f, "bytes_out_per_s")); });
  row("bytes in",
      [](const Json& f) { return formatBytes(static_cast<double>(unsignedAt(f, "bytes_in"))); });
  row("bytes out",
      [](const Json& f) { return formatBytes(static_cast<double>(unsignedAt(f, "bytes_out"))); });
  row("connections/s",
      [](const Json& f) { return rate(number(object(f, "connections"), "accepted_per_s")); });
  row("connections open",
      [](const Json& f) { return std::to_string(unsignedAt(object(f, "connections"), "active")); });
  row("file cache hits", [](const Json& f) {
    const Json& c = object(f, "open_file_cache");
    auto it = c.find("hit_rate");
    if (it == c.end() || !it->is_number()) return std::string("-");
    return formatPercent(it->get<double>()) + " of " +
           std::to_string(unsignedAt(c, "hits") + unsignedAt(c, "misses"));
  });
  row("proxy cache hits", [](const Json& f) {
    auto cache = f.find("proxy_cache");
    if (cache == f.end() || !cache->is_object()) return std::string("-");
    auto it = cache->find("hit_rate");
    if (it == cache->end() || !it->is_number()) return std::string("-");
    return formatPercent(it->get<double>()) + " of " +
           std::to_string(unsignedAt(*cache, "hits") + unsignedAt(*cache, "stale") +
                          unsignedAt(*cache, "misses"));
  });
  row("HTTP/3", [](const Json& f) {
    const Json& h3 = object(f, "http3");
    if (unsignedAt(h3, "handshakes") == 0 && unsignedAt(h3, "requests") == 0 &&
        unsignedAt(h3, "retries") == 0) {
      return std::string("-");
    }
    return std::to_string(unsignedAt(h3, "requests")) + " requests, " +
           std::to_string(unsignedAt(h3, "handshakes")) + " handshakes, " +
           std::to_string(unsignedAt(h3, "retries")) + " retries, " +
           std::to_string(unsignedAt(h3, "migrations")) + " migrations, " +
           std::to_string(unsignedAt(h3, "lost_packets")) + " lost packets";
  });
  row("PHP pool waits", [](const Json& f) {
    const Json& php = object(f, "php");
    uint64_t waits = unsignedAt(php, "waits");
    if (waits == 0) return std::string("0");
    return std::to_string(waits) + " (mean " + formatLatencyUs(unsignedAt(php, "wait_mean_us")) +
           ")";
  });
  row("CPU",
      [](const Json& f) { return formatFixed(number(f, "cpu_percent"), 1) + "% of a core"; });
  row("RSS",
      [](const Json& f) { return formatBytes(static_cast<double>(unsignedAt(f, "rss_bytes"))); });
  return out;
}

}  // namespace

std::string renderInstanceMetrics(const Json& r) {
  const Json& now = object(r, "now");
  const Json& win = object(r, "window");
  std::string out = "instance " + text(r, "name", "?") + ": " + text(r, "status", "?") + ", " +
                    std::to_string(unsignedAt(r, "processes")) + " process(es), " +
                    std::to_string(unsignedAt(r, "reporting")) + " reporting\n";
  std::string window = "LAST " + formatSpan(static_cast<int64_t>(unsignedAt(r, "since_ms")));
  // The recent span is about 10 s, shorter just after a start.
  int64_t recent_ms = std::max<int64_t>(1000, std::llround(number(now, "seconds")) * 1000);
  std::string recent = "NOW (" + formatSpan(recent_ms) + ")";
  out += renderTable({"", recent, window}, rows(now, win));
  out += text(r, "latency_note", "") + "\n";
  out += renderSharedHandoffs(array(r, "shared"));
  return out;
}

std::string renderStatusLines(const Json& lines) {
  if (!lines.is_array() || lines.empty()) return "";
  std::vector<std::vector<std::string>> table;
  for (const Json& l : lines) {
    table.push_back({text(l, "name", "?"), text(l, "status", "?"),
                     rate(number(l, "requests_per_s")), formatLatencyUs(unsignedAt(l, "p99_us")),
                     formatPercent(number(l, "error_rate_4xx")),
                     formatPercent(number(l, "error_rate_5xx"))});
  }
  return renderTable({"INSTANCE", "STATUS", "REQ/S", "P99", "4XX", "5XX"}, table);
}

}  // namespace scalws::ctl
