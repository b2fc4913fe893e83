// scalwsctl's output for people: aligned tables and key/value blocks made from the
// controller's JSON results (control_handlers.h has their shapes). Pure: a result in, text
// out; `--json` bypasses it and prints the result as it came.
#pragma once

#include <string>
#include <vector>

#include "ipc/message.h"

namespace scalws::ctl {

// Columns padded to their widest cell, two spaces apart; trailing blanks trimmed.
std::string renderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// The text for the result of `op` (as named in the op table), ending in a newline.
std::string renderResult(const std::string& op, const ipc::Json& result);

// "2024-05-01 12:00:05" in local time; "-" for 0.
std::string formatTime(int64_t unix_ms);
// "45s", "5m 3s", "2h 10m", "3d 4h".
std::string formatDuration(int64_t ms);

}  // namespace scalws::ctl
