// The parsers behind config_loader.cpp, one file each, and the two tables that name them.
//
// Adding a top-level table (upstream, php_pool) is one new *_section.cpp plus a line in
// sectionParsers(); adding a route action (proxy, php) is one new *_action.cpp, its type
// in RouteConfig::action, and a line in actionParsers(). Each parser records every problem
// in the ParseContext and fills what it could; the loader discards the result on any error.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/config/config_value.h"
#include "common/config/parse_context.h"
#include "common/config/site_config.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {

class TableReader;

// A top-level key: `value` is whatever the file holds under it (checked by the parser).
struct SectionParser {
  std::string_view key;
  void (*parse)(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
};
std::span<const SectionParser> sectionParsers();  // config_loader.cpp

void parseServerSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
void parseListenSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
void parseRouteSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
void parsePhpPoolSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
void parseUpstreamSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
void parseCacheSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
// [site]: the response rules every route starts from. Parsed before the routes, which may
// read its errors.root.
void parseSiteSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
void parseRealIpSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site);
// After every section: each proxy.cache and cache_purge.cache names a [cache] that exists.
void checkCacheReferences(ParseContext& ctx, const SiteConfig& site);
// After every section: each php route names a [php_pool] that exists.
void checkPhpPoolReferences(ParseContext& ctx, const SiteConfig& site);
// After every section: upstream host names become addresses (LoadOptions::resolver), and
// each proxy route names an [upstream] that exists.
void resolveUpstreamHosts(ParseContext& ctx, SiteConfig& site);
void checkUpstreamReferences(ParseContext& ctx, const SiteConfig& site);

// listen.tls (a table): `path` is "listen.tls" for messages.
void parseTlsTable(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                   TlsConfig& tls);

// A `names` key of `table` (a server name or a list of them, see checkServerName), lower-
// cased into `out`; `if_empty` ends the message for an empty list ("leave it out to ...").
void readServerNames(TableReader& table, std::vector<std::string>& out, std::string_view if_empty);

// listen.quic (a table): `path` is "listen.quic" for messages.
void parseQuicTable(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                    QuicConfig& quic);

// A route action key ("respond", "static"): `path` is "route.<key>" for messages.
struct ActionParser {
  std::string_view key;
  void (*parse)(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                RouteConfig& route);
};
std::span<const ActionParser> actionParsers();  // route_section.cpp

void parseRespondAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                        RouteConfig& route);
void parseStaticAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                       RouteConfig& route);
void parseStatusAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                       RouteConfig& route);
void parsePhpAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                    RouteConfig& route);
void parseCachePurgeAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                           RouteConfig& route);
void parseProxyAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                      RouteConfig& route);
void parseRedirectAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                         RouteConfig& route);
// route.app: a ProxyAction with `app` set instead of `upstream`.
void parseAppAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                    RouteConfig& route);

// The parts of a route other than its action.
void parseRouteMatch(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                     MatchConfig& match);
void parseRoutePolicy(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                      RoutePolicy& policy);
// headers, errors and compress of a route or of [site] (response_keys.cpp).
// `default_error_root`: where error pages are read when `errors` names no root of its own
// ("" when it must).
void parseResponseKeys(TableReader& table, std::string_view default_error_root,
                       ResponseConfig& out);
// `limit` of a route or of [site] (limit_config.h): `path` is "route.limit" for messages.
void parseLimit(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                LimitConfig& limit);
void parseRouteAuth(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                    AuthConfig& auth);
class TableReader;
// A template's $N must name a group of the route's regex (recorded at `key` of `table`).
void checkTemplateCaptures(const UriTemplate& t, const MatchConfig& match, TableReader& table,
                           std::string_view key);

}  // namespace scalws::common::config
