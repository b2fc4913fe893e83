// route.respond: a fixed response (status, body, headers) built once at load.
#include <array>

#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {
namespace {

// Framing and per-response headers the server writes itself; a second copy from the
// config would make the response ambiguous (RFC 9112 §6.3) or stale.
constexpr std::array<std::string_view, 4> kReservedHeaders = {"content-length", "transfer-encoding",
                                                              "connection", "date"};

void readHeaders(TableReader& table, RespondAction& action) {
  const ConfigValue* value = table.get("headers");
  if (value == nullptr) return;
  std::string path = table.keyPath("headers");
  ParseContext& ctx = table.context();
  if (!expectType(*value, ConfigValue::Type::kTable, path, ctx)) return;
  for (const ConfigEntry& entry : value->entries) {
    const std::string& name = entry.key;
    if (!isHttpToken(name)) {
      ctx.error(entry.where, path + ": \"" + name + "\" is not a valid header name");
      continue;
    }
    std::string lower = toLowerAscii(name);
    bool reserved = false;
    for (std::string_view r : kReservedHeaders) reserved = reserved || lower == r;
    if (reserved) {
      ctx.error(entry.where,
                path + ": \"" + name + "\" is computed by the server and cannot be set");
      continue;
    }
    std::string value_path = path + "." + name;
    if (!expectType(entry.value, ConfigValue::Type::kString, value_path, ctx)) continue;
    if (!isValidFieldValue(entry.value.string)) {
      ctx.error(entry.value.where,
                value_path + ": must not contain CR, LF, NUL or other control characters");
      continue;
    }
    action.headers.push_back(HeaderPair{name, entry.value.string});
  }
}

}  // namespace

void parseRespondAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                        RouteConfig& route) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  RespondAction action;
  TableReader table(value, path, ctx);
  table.readInteger("status", 200, 599, action.status);
  table.readString("body", action.body);
  // RFC 9110 §15.3.5, §15.4.5: 204 and 304 responses end at the header section.
  if ((action.status == 204 || action.status == 304) && !action.body.empty()) {
    table.error(*table.get("body"), "body",
                "must be empty with status " + std::to_string(action.status) + " (a " +
                    std::to_string(action.status) + " response has no body)");
  }
  readHeaders(table, action);
  table.finish();
  route.action = std::move(action);
}

}  // namespace scalws::common::config
