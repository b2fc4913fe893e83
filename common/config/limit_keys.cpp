// `limit` of a route or of [site]: rate, burst, connections, key.
#include <charconv>

#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {
namespace {

// "10r/s" or "10r/m": false (with `why`) when it is neither.
bool parseRate(std::string_view text, LimitConfig& limit, std::string& why) {
  size_t r = text.find("r/");
  uint64_t count = 0;
  if (r == std::string_view::npos || r == 0 || text.size() != r + 3) {
    why = "invalid rate \"" + std::string(text) + "\" (expected requests per second or minute, " +
          "e.g. \"10r/s\" or \"30r/m\")";
    return false;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + r, count);
  char unit = text[r + 2];
  if (ec != std::errc() || end != text.data() + r || (unit != 's' && unit != 'm')) {
    why = "invalid rate \"" + std::string(text) + "\" (expected requests per second or minute, " +
          "e.g. \"10r/s\" or \"30r/m\")";
    return false;
  }
  if (count < 1 || count > kMaxLimitRate) {
    why = "the rate must be between 1 and " + std::to_string(kMaxLimitRate) + " requests, found " +
          std::to_string(count);
    return false;
  }
  limit.rate = static_cast<uint32_t>(count);
  limit.per_seconds = unit == 's' ? 1 : 60;
  return true;
}

void readKey(TableReader& table, LimitConfig& limit) {
  std::string key;
  if (!table.readString("key", key)) return;
  // A pseudo-header (":authority") is no header a client sends as such; "" is no name.
  if (!isHttpToken(key)) {
    table.error(*table.get("key"), "key",
                "\"" + key + "\" is not a header name (leave key out to count per client address)");
    return;
  }
  limit.key = toLowerAscii(key);
}

}  // namespace

bool hasLimits(const SiteConfig& site) {
  if (site.limit) return true;
  for (const RouteConfig& route : site.routes) {
    if (route.limit) return true;
  }
  return false;
}

void parseLimit(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                LimitConfig& limit) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  limit.where = value.where;
  TableReader table(value, path, ctx);
  std::string rate;
  if (table.readString("rate", rate)) {
    std::string why;
    if (!parseRate(rate, limit, why)) table.error(*table.get("rate"), "rate", why);
  }
  table.readInteger("burst", 0, kMaxLimitBurst, limit.burst);
  table.readInteger("connections", 1, kMaxLimitConnections, limit.connections);
  readKey(table, limit);
  if (table.get("rate") == nullptr && table.get("connections") == nullptr) {
    table.tableError("needs a rate, connections or both");
  } else if (table.get("rate") == nullptr && table.get("burst") != nullptr) {
    table.error(*table.get("burst"), "burst", "only goes with a rate");
  }
  table.finish();
}

}  // namespace scalws::common::config
