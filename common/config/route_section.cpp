// [[route]]: match + exactly one action + policy (+ auth), tried in file order by the
// router; or match + rewrite, which hands the request back to routing with a new path.
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {
namespace {

constexpr ActionParser kActionParsers[] = {
    {"respond", parseRespondAction},
    {"static", parseStaticAction},
    {"status", parseStatusAction},
    {"php", parsePhpAction},
    {"proxy", parseProxyAction},
    {"app", parseAppAction},
    {"cache_purge", parseCachePurgeAction},
    {"redirect", parseRedirectAction},
};

std::string actionNames() {
  std::string names;
  for (const ActionParser& action : kActionParsers) {
    if (!names.empty()) names += ", ";
    names += action.key;
  }
  return names;
}

// Where a route's error pages are read when its `errors` names no root: the files it
// serves (static, php), else the site's error root.
std::string_view defaultErrorRoot(const RouteConfig& route, const SiteConfig& site) {
  if (const auto* files = std::get_if<StaticAction>(&route.action)) return files->root;
  if (const auto* php = std::get_if<PhpAction>(&route.action)) return php->root;
  return site.response.errors ? std::string_view(site.response.errors->root) : "";
}

std::string_view chosenKey(const ConfigEntry* chosen) {
  return chosen == nullptr ? std::string_view() : std::string_view(chosen->key);
}

void readRewrite(TableReader& table, RouteConfig& route) {
  std::string text;
  if (!table.readString("rewrite", text)) return;
  Result<UriTemplate> parsed = UriTemplate::parse(text, UriTemplate::Kind::kRewrite);
  if (!parsed.ok()) {
    table.error(*table.get("rewrite"), "rewrite", parsed.status().message());
    return;
  }
  checkTemplateCaptures(*parsed, route.match, table, "rewrite");
  route.rewrite = std::move(parsed).value();
}

void parseRoute(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!expectType(value, ConfigValue::Type::kTable, "route", ctx)) return;
  RouteConfig route;
  route.where = value.where;
  TableReader table(value, "route", ctx);

  if (const ConfigValue* match = table.get("match")) {
    parseRouteMatch(*match, table.keyPath("match"), ctx, route.match);
  }
  // Exactly one action: the first one written is parsed, any further one is refused.
  const ConfigEntry* chosen = nullptr;
  for (const ConfigEntry& entry : value.entries) {
    for (const ActionParser& action : kActionParsers) {
      if (entry.key != action.key) continue;
      if (chosen != nullptr) {
        ctx.error(entry.where, "route: more than one action (\"" + chosen->key + "\" and \"" +
                                   entry.key + "\"); a route takes exactly one");
      } else {
        chosen = &entry;
        action.parse(entry.value, table.keyPath(action.key), ctx, route);
      }
    }
  }
  for (const ActionParser& action : kActionParsers) table.get(action.key);  // known keys
  const ConfigValue* rewrite = table.get("rewrite");
  if (rewrite != nullptr) {
    readRewrite(table, route);
    // The route only turns the path into another; the route that path matches answers,
    // with its own policy, auth and response rules.
    for (const ConfigEntry& entry : value.entries) {
      if (entry.key == "policy" || entry.key == "auth" || entry.key == "limit" ||
          entry.key == "headers" || entry.key == "errors" || entry.key == "compress" ||
          entry.key == chosenKey(chosen)) {
        ctx.error(entry.where, "route: \"" + entry.key +
                                   "\" cannot go with rewrite (routing starts again with the "
                                   "new path: put it on the route that path matches)");
      }
    }
  } else if (chosen == nullptr) {
    table.tableError("no action (expected one of: " + actionNames() + ", or a rewrite)");
  }

  if (const ConfigValue* policy = table.get("policy"); policy != nullptr && rewrite == nullptr) {
    parseRoutePolicy(*policy, table.keyPath("policy"), ctx, route.policy);
  }
  if (rewrite == nullptr) {
    parseResponseKeys(table, defaultErrorRoot(route, site), route.response);
  } else {
    for (const char* key : {"headers", "errors", "compress"}) table.get(key);  // refused above
  }
  if (const ConfigValue* auth = table.get("auth"); auth != nullptr && rewrite == nullptr) {
    AuthConfig config;
    parseRouteAuth(*auth, table.keyPath("auth"), ctx, config);
    route.auth = std::move(config);
  }
  if (const ConfigValue* limit = table.get("limit"); limit != nullptr && rewrite == nullptr) {
    LimitConfig config;
    parseLimit(*limit, table.keyPath("limit"), ctx, config);
    route.limit = std::move(config);
  }
  table.finish();
  site.routes.push_back(std::move(route));
}

}  // namespace

std::span<const ActionParser> actionParsers() {
  return kActionParsers;
}

void parseRouteSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!value.is(ConfigValue::Type::kArray)) {
    ctx.error(value.where, "route: expected an array of tables ([[route]]), found " +
                               std::string(describeType(value.type)));
    return;
  }
  for (const ConfigValue& element : value.array) parseRoute(element, ctx, site);
}

}  // namespace scalws::common::config
