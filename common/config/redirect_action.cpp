// route.redirect: answers every request of the route with a redirect to a URI made from a
// template ({host}, {uri}, {path}, {query}, $1..$9 of the route's regex).
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {

void checkTemplateCaptures(const UriTemplate& t, const MatchConfig& match, TableReader& table,
                           std::string_view key) {
  if (!t.usesCaptures()) return;
  uint32_t groups = match.regex ? match.regex->captureCount() : 0;
  if (!match.regex) {
    table.error(*table.get(key), key,
                "uses $" + std::to_string(t.highestCapture()) +
                    " but the route's match has no regex to capture it");
  } else if (t.highestCapture() > groups) {
    table.error(*table.get(key), key,
                "uses $" + std::to_string(t.highestCapture()) + " but the regex has " +
                    std::to_string(groups) + " group" + (groups == 1 ? "" : "s"));
  }
}

void parseRedirectAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                         RouteConfig& route) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  RedirectAction action;
  TableReader table(value, path, ctx);
  bool ok = false;
  std::string to;
  if (table.require("to") != nullptr && table.readString("to", to)) {
    Result<UriTemplate> parsed = UriTemplate::parse(to, UriTemplate::Kind::kRedirect);
    if (parsed.ok()) {
      action.to = std::move(parsed).value();
      checkTemplateCaptures(action.to, route.match, table, "to");
      ok = true;
    } else {
      table.error(*table.get("to"), "to", parsed.status().message());
    }
  }
  if (const ConfigValue* status = table.get("status")) {
    int64_t code = 0;
    if (readIntegerValue(*status, 300, 399, table.keyPath("status"), ctx, code)) {
      if (code == 301 || code == 302 || code == 303 || code == 307 || code == 308) {
        action.status = static_cast<uint16_t>(code);
      } else {
        table.error(*status, "status",
                    "must be 301, 302, 303, 307 or 308, found " + std::to_string(code));
      }
    }
  }
  table.finish();
  if (ok) route.action = std::move(action);
}

}  // namespace scalws::common::config
