#include "controller/ctl/ctl_metrics_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "controller/ctl/ctl_output.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

const Json& sub(const Json& j, const char* key) {
  static const Json kEmpty = Json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

double dbl(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

uint64_t asU64(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer())
    return v.get<int64_t>() < 0 ? 0 : static_cast<uint64_t>(v.get<int64_t>());
  if (v.is_number_float()) return v.get<double>() < 0 ? 0 : static_cast<uint64_t>(v.get<double>());
  return 0;
}

uint64_t u64(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() ? asU64(*it) : 0;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string rate(double v) {
  return fixed(v, v < 10 ? 2 : 1);
}

std::string actions(const Json& by_action) {
  std::string out;
  for (const auto& [name, value] : by_action.items()) {
    if (asU64(value) == 0) continue;
    out += (out.empty() ? "" : ", ") + name + " " + std::to_string(asU64(value));
  }
  return out.empty() ? "-" : out;
}

std::string classes(const Json& by_class) {
  std::string out;
  for (const char* c : {"1xx", "2xx", "3xx", "4xx", "5xx"}) {
    uint64_t n = u64(by_class, c);
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
  row("requests", [](const Json& f) { return std::to_string(u64(f, "requests")); });
  row("requests/s", [](const Json& f) { return rate(dbl(f, "requests_per_s")); });
  row("by status", [](const Json& f) { return classes(sub(f, "by_class")); });
  row("by action", [](const Json& f) { return actions(sub(f, "by_action")); });
  row("errors 4xx", [](const Json& f) { return formatPercent(dbl(sub(f, "error_rate"), "4xx")); });
  row("errors 5xx", [](const Json& f) { return formatPercent(dbl(sub(f, "error_rate"), "5xx")); });
  for (const char* p : {"p50", "p90", "p99"}) {
    row(std::string("latency ") + p,
        [p](const Json& f) { return formatLatencyUs(u64(sub(f, "latency_us"), p)); });
  }
  row("bytes in/s", [](const Json& f) { return formatBytes(dbl(f, "bytes_in_per_s")); });
  row("bytes out/s", [](const Json& f) { return formatBytes(dbl(f, "bytes_out_per_s")); });
  row("bytes in",
      [](const Json& f) { return formatBytes(static_cast<double>(u64(f, "bytes_in"))); });
  row("bytes out",
      [](const Json& f) { return formatBytes(static_cast<double>(u64(f, "bytes_out"))); });
  row("connections/s",
      [](const Json& f) { return rate(dbl(sub(f, "connections"), "accepted_per_s")); });
  row("connections open",
      [](const Json& f) { return std::to_string(u64(sub(f, "connections"), "active")); });
  row("file cache hits", [](const Json& f) {
    const Json& c = sub(f, "open_file_cache");
    auto it = c.find("hit_rate");
    if (it == c.end() || !it->is_number()) return std::string("-");
    return formatPercent(it->get<double>()) + " of " +
           std::to_string(u64(c, "hits") + u64(c, "misses"));
  });
  row("HTTP/3", [](const Json& f) {
    const Json& h3 = sub(f, "http3");
    if (u64(h3, "handshakes") == 0 && u64(h3, "requests") == 0 && u64(h3, "retries") == 0) {
      return std::string("-");
    }
    return std::to_string(u64(h3, "requests")) + " requests, " +
           std::to_string(u64(h3, "handshakes")) + " handshakes, " +
           std::to_string(u64(h3, "retries")) + " retries, " +
           std::to_string(u64(h3, "migrations")) + " migrations, " +
           std::to_string(u64(h3, "lost_packets")) + " lost packets";
  });
  row("PHP pool waits", [](const Json& f) {
    const Json& php = sub(f, "php");
    uint64_t waits = u64(php, "waits");
    if (waits == 0) return std::string("0");
    return std::to_string(waits) + " (mean " + formatLatencyUs(u64(php, "wait_mean_us")) + ")";
  });
  row("CPU", [](const Json& f) { return fixed(dbl(f, "cpu_percent"), 1) + "% of a core"; });
  row("RSS", [](const Json& f) { return formatBytes(static_cast<double>(u64(f, "rss_bytes"))); });
  return out;
}

}  // namespace

std::string formatLatencyUs(uint64_t us) {
  if (us == 0) return "-";
  if (us == UINT64_MAX) return ">67s";
  if (us < 1000) return std::to_string(us) + "µs";
  if (us < 1'000'000) return fixed(static_cast<double>(us) / 1e3, 2) + "ms";
  return fixed(static_cast<double>(us) / 1e6, 2) + "s";
}

std::string formatBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024.0;
    ++unit;
  }
  return (unit == 0 ? fixed(bytes, 0) : fixed(bytes, 1)) + " " + kUnits[unit];
}

std::string formatPercent(double fraction) {
  return fixed(fraction * 100.0, fraction != 0 && fraction < 0.001 ? 3 : 1) + "%";
}

std::string formatSpan(int64_t ms) {
  if (ms >= 86'400'000 && ms % 86'400'000 == 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms >= 3'600'000 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms >= 60'000 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  return std::to_string(ms / 1000) + "s";
}

std::string renderInstanceMetrics(const Json& r) {
  const Json& now = sub(r, "now");
  const Json& win = sub(r, "window");
  std::string name = r.value("name", std::string("?"));
  std::string out = "instance " + name + ": " + r.value("status", std::string("?")) + ", " +
                    std::to_string(u64(r, "processes")) + " process(es), " +
                    std::to_string(u64(r, "reporting")) + " reporting\n";
  std::string window = "LAST " + formatSpan(static_cast<int64_t>(u64(r, "since_ms")));
  // The recent span is about 10 s, shorter just after a start.
  int64_t recent_ms = std::max<int64_t>(1000, std::llround(dbl(now, "seconds")) * 1000);
  std::string recent = "NOW (" + formatSpan(recent_ms) + ")";
  out += renderTable({"", recent, window}, rows(now, win));
  out += r.value("latency_note", std::string()) + "\n";
  return out;
}

std::string renderStatusLines(const Json& lines) {
  if (!lines.is_array() || lines.empty()) return "";
  std::vector<std::vector<std::string>> table;
  for (const Json& l : lines) {
    table.push_back({l.value("name", std::string("?")), l.value("status", std::string("?")),
                     rate(dbl(l, "requests_per_s")), formatLatencyUs(u64(l, "p99_us")),
                     formatPercent(dbl(l, "error_rate_4xx")),
                     formatPercent(dbl(l, "error_rate_5xx"))});
  }
  return renderTable({"INSTANCE", "STATUS", "REQ/S", "P99", "4XX", "5XX"}, table);
}

}  // namespace scalws::ctl
