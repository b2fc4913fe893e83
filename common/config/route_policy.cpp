// route.policy: per-route limits and the client address allow-list.
#include "common/config/cidr.h"
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {
namespace {

void readAllow(TableReader& table, RoutePolicy& policy) {
  const ConfigValue* value = table.get("allow");
  if (value == nullptr) return;
  std::vector<Cidr> allow;
  bool ok =
      forEachString(*value, table.keyPath("allow"), table.context(),
                    [&](const ConfigValue& element, const std::string& path) {
                      Result<Cidr> cidr = parseCidr(element.string);
                      if (!cidr.ok()) {
                        table.context().error(element.where, path + ": " + cidr.status().message());
                        return;
                      }
                      allow.push_back(std::move(*cidr));
                    });
  if (!ok) return;
  // An empty list would read as "everyone" (the default) while looking like "no one".
  if (value->is(ConfigValue::Type::kArray) && value->array.empty()) {
    table.error(*value, "allow",
                "must not be an empty array (leave allow out to allow every client)");
    return;
  }
  policy.allow = std::move(allow);
}

}  // namespace

void parseRoutePolicy(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                      RoutePolicy& policy) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  TableReader table(value, path, ctx);
  Bytes max_body = 0;
  if (table.readSize("max_body", max_body)) policy.max_body = max_body;
  Milliseconds timeout = 0;
  if (table.readDuration("timeout", timeout)) {
    if (timeout == 0) {
      table.error(*table.get("timeout"), "timeout", "must be greater than zero");
    } else {
      policy.timeout = timeout;
    }
  }
  readAllow(table, policy);
  table.finish();
}

}  // namespace scalws::common::config
