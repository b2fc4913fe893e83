#include "controller/ctl/ctl_format.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "common/printable.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

// Columns as a terminal shows them: UTF-8 continuation bytes take no column ("µs").
size_t displayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

const Json* field(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

}  // namespace

std::string escapeText(std::string_view s) {
  return common::printable(s);
}

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

std::string labelled(const std::string& key, const std::string& value) {
  std::string out = key;
  out.resize(std::max<size_t>(key.size() + 1, 14), ' ');
  return out + value + "\n";
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

std::string formatFixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string formatLatencyUs(uint64_t us) {
  if (us == 0) return "-";
  if (us == UINT64_MAX) return ">67s";
  if (us < 1000) return std::to_string(us) + "µs";
  if (us < 1'000'000) return formatFixed(static_cast<double>(us) / 1e3, 2) + "ms";
  return formatFixed(static_cast<double>(us) / 1e6, 2) + "s";
}

std::string formatBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024.0;
    ++unit;
  }
  return (unit == 0 ? formatFixed(bytes, 0) : formatFixed(bytes, 1)) + " " + kUnits[unit];
}

std::string formatPercent(double fraction) {
  return formatFixed(fraction * 100.0, fraction != 0 && fraction < 0.001 ? 3 : 1) + "%";
}

std::string formatSpan(int64_t ms) {
  if (ms >= 86'400'000 && ms % 86'400'000 == 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms >= 3'600'000 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms >= 60'000 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  return std::to_string(ms / 1000) + "s";
}

std::string textOf(const Json& v) {
  if (v.is_string()) return escapeText(v.get_ref<const std::string&>());
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return escapeText(v.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string text(const Json& j, std::string_view key, std::string_view fallback) {
  const Json* v = field(j, key);
  if (v == nullptr || v->is_null()) return std::string(fallback);
  if (v->is_string() && v->get_ref<const std::string&>().empty()) return std::string(fallback);
  return textOf(*v);
}

int64_t integer(const Json& j, std::string_view key) {
  const Json* v = field(j, key);
  if (v == nullptr) return 0;
  if (v->is_number_integer()) return v->get<int64_t>();  // unsigned beyond INT64_MAX wraps
  if (v->is_number_float()) return static_cast<int64_t>(v->get<double>());
  return 0;
}

uint64_t unsignedAt(const Json& j, std::string_view key) {
  const Json* v = field(j, key);
  if (v == nullptr) return 0;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  if (v->is_number_integer()) return v->get<int64_t>() < 0 ? 0 : v->get<uint64_t>();
  if (v->is_number_float())
    return v->get<double>() < 0 ? 0 : static_cast<uint64_t>(v->get<double>());
  return 0;
}

double number(const Json& j, std::string_view key) {
  const Json* v = field(j, key);
  return v != nullptr && v->is_number() ? v->get<double>() : 0.0;
}

bool flag(const Json& j, std::string_view key, bool fallback) {
  const Json* v = field(j, key);
  return v != nullptr && v->is_boolean() ? v->get<bool>() : fallback;
}

const Json& object(const Json& j, std::string_view key) {
  static const Json kEmpty = Json::object();
  const Json* v = field(j, key);
  return v != nullptr && v->is_object() ? *v : kEmpty;
}

const Json& array(const Json& j, std::string_view key) {
  static const Json kEmpty = Json::array();
  const Json* v = field(j, key);
  return v != nullptr && v->is_array() ? *v : kEmpty;
}

std::string assignedInstance(const Json& record) {
  std::string instance = text(record, "instance", "");
  if (instance.empty()) return "-";
  if (text(record, "as") != text(record, "name")) instance += " as " + text(record, "as");
  return instance;
}

std::string processFactsText(const Json& c) {
  if (c.contains("error")) return text(c, "error");
  const Json& uid = array(c, "uid");
  const Json& gid = array(c, "gid");
  return "user " + text(c, "user", "(none)") + " uid " + (uid.size() == 4 ? textOf(uid[1]) : "?") +
         " gid " + (gid.size() == 4 ? textOf(gid[1]) : "?") + ", no_new_privs " +
         (flag(c, "no_new_privs") ? "yes" : "NO") + ", seccomp " + text(c, "seccomp") +
         ", capabilities " + text(c, "capabilities");
}

}  // namespace scalws::ctl
