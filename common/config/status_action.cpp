// route.status: the worker's own figures as JSON. It takes no options; who may
// read it is the route's policy.allow.
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {

void parseStatusAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                       RouteConfig& route) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  TableReader table(value, path, ctx);
  table.finish();  // any key is unknown
  route.action = StatusAction{};
}

}  // namespace scalws::common::config
