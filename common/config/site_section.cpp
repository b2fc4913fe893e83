// [site]: what every route's responses start from (headers, errors, compress), and what
// answers no route made get.
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {

void parseSiteSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!expectType(value, ConfigValue::Type::kTable, "site", ctx)) return;
  TableReader table(value, "site", ctx);
  parseResponseKeys(table, "", site.response);
  table.finish();
}

}  // namespace scalws::common::config
