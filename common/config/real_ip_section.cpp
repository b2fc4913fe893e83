// [real_ip]: which peers (load balancers, proxies) are trusted to name the client in a
// header, and which header.
#include "common/config/cidr.h"
#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {

void parseRealIpSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!expectType(value, ConfigValue::Type::kTable, "real_ip", ctx)) return;
  RealIpConfig config;
  config.where = value.where;
  TableReader table(value, "real_ip", ctx);
  if (const ConfigValue* from = table.require("from")) {
    forEachString(*from, table.keyPath("from"), ctx,
                  [&](const ConfigValue& element, const std::string& path) {
                    Result<Cidr> cidr = parseCidr(element.string);
                    if (!cidr.ok()) {
                      ctx.error(element.where, path + ": " + cidr.status().message());
                      return;
                    }
                    config.from.push_back(std::move(*cidr));
                  });
    if (from->is(ConfigValue::Type::kArray) && from->array.empty()) {
      table.error(*from, "from", "must name at least one trusted address or range");
    }
  }
  std::string header;
  if (table.readString("header", header)) {
    if (!isHttpToken(header)) {
      table.error(*table.get("header"), "header", "\"" + header + "\" is not a header name");
    } else {
      config.header = toLowerAscii(header);
    }
  }
  table.finish();
  site.real_ip = std::move(config);
}

}  // namespace scalws::common::config
