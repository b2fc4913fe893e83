// The pieces every scalwsctl renderer builds from: aligned tables, times, durations,
// sizes, and readers of the controller's JSON that never throw (a field of the wrong type
// reads as absent; the answer is the controller's, but much of it comes from workers).
// Every string a reader returns has its control characters escaped (escapeText), so what a
// worker sent cannot move the cursor, recolour the terminal or forge a line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/message.h"

namespace scalws::ctl {

// Columns padded to their widest cell, two spaces apart; trailing blanks trimmed.
std::string renderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// "key           value\n": a key/value block's line, values aligned at column 15.
std::string labelled(const std::string& key, const std::string& value);

// common::printable(): control characters and bytes that are not UTF-8 escaped.
std::string escapeText(std::string_view text);

// "2024-05-01 12:00:05" in local time; "-" for 0.
std::string formatTime(int64_t unix_ms);
// "45s", "5m 3s", "2h 10m", "3d 4h".
std::string formatDuration(int64_t ms);
// "850µs", "1.45ms", "2.10s"; "-" for 0 (nothing counted).
std::string formatLatencyUs(uint64_t us);
// "512 B", "1.5 KiB", "3.2 MiB", "1.0 GiB".
std::string formatBytes(double bytes);
// A fraction as "0.5%".
std::string formatPercent(double fraction);
// "10s", "5m", "1h", "24h", "7d", or "90s" when nothing rounder fits.
std::string formatSpan(int64_t ms);
// `v` with `decimals` digits after the point.
std::string formatFixed(double v, int decimals);

// j[key] as text, escaped: strings as they are ("" and null give `fallback`), booleans as
// yes/no, numbers and anything else in JSON form.
std::string text(const ipc::Json& j, std::string_view key, std::string_view fallback = "-");
// Any JSON value as text, escaped (as text() does for a field).
std::string textOf(const ipc::Json& v);
// Numbers: 0 when absent or not a number; negative values read as 0 where unsigned.
int64_t integer(const ipc::Json& j, std::string_view key);
uint64_t unsignedAt(const ipc::Json& j, std::string_view key);
double number(const ipc::Json& j, std::string_view key);
bool flag(const ipc::Json& j, std::string_view key, bool fallback = false);
// A process's sandbox as the controller read it in /proc/PID/status (the "checked" object
// of instance and app status: controller/instances/process_facts.h), on one line: "user
// www-data uid 33 gid 33, no_new_privs yes, seccomp filter, capabilities none".
std::string processFactsText(const ipc::Json& checked);
// Where a pool or an app is assigned: "INSTANCE", "INSTANCE as NAME" when it is bound
// there under another name than its own, "-" when unassigned.
std::string assignedInstance(const ipc::Json& record);

// The object or array at key; an empty one when absent or of another type.
const ipc::Json& object(const ipc::Json& j, std::string_view key);
const ipc::Json& array(const ipc::Json& j, std::string_view key);

}  // namespace scalws::ctl
