// scalwsctl's human output for metrics: `instance metrics` as a two-column table
// (now, the window) and the per-instance lines of `status`. Pure (ctl_format.h); the
// JSON shapes are in controller/metrics/metrics_report.h.
#pragma once

#include <cstdint>
#include <string>

#include "ipc/message.h"

namespace scalws::ctl {

std::string renderInstanceMetrics(const ipc::Json& result);
// The `instance_metrics` array of a status result as a table; "" when it is empty.
std::string renderStatusLines(const ipc::Json& lines);

}  // namespace scalws::ctl
