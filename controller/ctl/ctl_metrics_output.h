// scalwsctl's human output for metrics: `instance metrics` as a two-column table
// (now, the window) and the per-instance lines of `status`. Pure, like ctl_output.h; the
// JSON shapes are in controller/metrics_report.h.
#pragma once

#include <cstdint>
#include <string>

#include "ipc/message.h"

namespace scalws::ctl {

std::string renderInstanceMetrics(const ipc::Json& result);
// The `instance_metrics` array of a status result as a table; "" when it is empty.
std::string renderStatusLines(const ipc::Json& lines);

// "850µs", "1.45ms", "2.10s"; "-" for 0 (nothing counted).
std::string formatLatencyUs(uint64_t us);
// "512 B", "1.5 KiB", "3.2 MiB", "1.0 GiB".
std::string formatBytes(double bytes);
// A fraction as "0.5%".
std::string formatPercent(double fraction);
// "10s", "5m", "1h", "24h", "7d", or "90s" when nothing rounder fits.
std::string formatSpan(int64_t ms);

}  // namespace scalws::ctl
