// [site]: what every route's responses start from (headers, errors, compress), what
// answers no route made get, and the request limit of every route without its own.
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {

void parseSiteSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!expectType(value, ConfigValue::Type::kTable, "site", ctx)) return;
  TableReader table(value, "site", ctx);
  parseResponseKeys(table, "", site.response);
  if (const ConfigValue* limit = table.get("limit")) {
    LimitConfig config;
    parseLimit(*limit, table.keyPath("limit"), ctx, config);
    site.limit = std::move(config);
  }
  uint64_t bytes = 0;
  if (table.readSize("limit_table", bytes)) {
    if (bytes < kMinLimitTable || bytes > kMaxLimitTable) {
      table.error(*table.get("limit_table"), "limit_table",
                  "must be between 64k and 1g, found " + std::to_string(bytes));
    } else {
      site.limit_table = bytes;
    }
  }
  table.finish();
}

}  // namespace scalws::common::config
