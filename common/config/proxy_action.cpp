// route.proxy: forward the request to an [upstream.NAME].
#include <array>

#include "common/config/host_resolver.h"
#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {
namespace {

// Fields the proxy computes for each request: framing (RFC 9112 §6.3: it is re-made, never
// forwarded), connection management, and Host, which has its own key.
constexpr std::array<std::string_view, 9> kComputedRequestFields = {
    "content-length", "transfer-encoding", "connection", "keep-alive", "te",
    "trailer",        "upgrade",           "host",       "expect"};
// The writer frames the response and adds Date itself.
constexpr std::array<std::string_view, 7> kComputedResponseFields = {
    "content-length", "transfer-encoding", "connection", "keep-alive",
    "trailer",        "upgrade",           "date"};

template <size_t N>
bool isOneOf(const std::string& lower, const std::array<std::string_view, N>& names) {
  for (std::string_view n : names) {
    if (lower == n) return true;
  }
  return false;
}

template <size_t N>
void readHeaderTable(TableReader& table, std::string_view key,
                     const std::array<std::string_view, N>& computed,
                     std::vector<HeaderPair>& out) {
  const ConfigValue* value = table.get(key);
  if (value == nullptr) return;
  std::string path = table.keyPath(key);
  ParseContext& ctx = table.context();
  if (!expectType(*value, ConfigValue::Type::kTable, path, ctx)) return;
  for (const ConfigEntry& entry : value->entries) {
    if (!isHttpToken(entry.key)) {
      ctx.error(entry.where, path + ": \"" + entry.key + "\" is not a valid header name");
      continue;
    }
    std::string lower = toLowerAscii(entry.key);
    if (isOneOf(lower, computed)) {
      ctx.error(entry.where,
                path + ": \"" + entry.key + "\" is computed by the proxy and cannot be set");
      continue;
    }
    std::string value_path = path + "." + entry.key;
    if (!expectType(entry.value, ConfigValue::Type::kString, value_path, ctx)) continue;
    if (!isValidFieldValue(entry.value.string)) {
      ctx.error(entry.value.where,
                value_path + ": must not contain CR, LF, NUL or other control characters");
      continue;
    }
    out.push_back(HeaderPair{lower, entry.value.string});
  }
}

void readHost(TableReader& table, ProxyAction& action) {
  std::string host;
  if (!table.readString("host", host)) return;
  if (host == "pass") {
    action.host_mode = ProxyAction::HostMode::kPass;
  } else if (host == "upstream") {
    action.host_mode = ProxyAction::HostMode::kUpstream;
  } else {
    // A name, optionally with a port: what an upstream's virtual host expects.
    std::string_view name = host;
    size_t colon = name.rfind(':');
    bool port_ok = true;
    if (colon != std::string_view::npos) {
      std::string_view port = name.substr(colon + 1);
      port_ok = !port.empty() && port.size() <= 5 &&
                port.find_first_not_of("0123456789") == std::string_view::npos;
      name = name.substr(0, colon);
    }
    if (!port_ok || !isHostName(name)) {
      table.error(*table.get("host"), "host",
                  "expected \"pass\", \"upstream\" or a host name such as \"api.internal\", "
                  "found \"" +
                      host + "\"");
      return;
    }
    action.host_mode = ProxyAction::HostMode::kFixed;
    action.host = toLowerAscii(host);
  }
}

void readStripPrefix(TableReader& table, ProxyAction& action) {
  std::string prefix;
  if (!table.readString("strip_prefix", prefix)) return;
  if (prefix.empty() || prefix.front() != '/' || !isValidFieldValue(prefix) ||
      prefix.find_first_of(" ?#") != std::string::npos) {
    table.error(*table.get("strip_prefix"), "strip_prefix",
                "must be a path starting with \"/\" (no spaces, '?', '#' or control characters)");
    return;
  }
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  action.strip_prefix = prefix == "/" ? "" : prefix;
}

void readRemovedHeaders(TableReader& table, ProxyAction& action) {
  std::vector<std::string> names;
  if (!table.readStringList("remove_response_headers", names)) return;
  const ConfigValue& value = *table.get("remove_response_headers");
  for (const std::string& name : names) {
    if (!isHttpToken(name)) {
      table.error(value, "remove_response_headers", "\"" + name + "\" is not a valid header name");
      continue;
    }
    action.remove_response_headers.push_back(toLowerAscii(name));
  }
}

// Everything of route.proxy but the upstream: how the request and the answer are changed.
void readProxyOptions(TableReader& table, ProxyAction& action) {
  readStripPrefix(table, action);
  readHost(table, action);
  readHeaderTable(table, "set_request_headers", kComputedRequestFields, action.set_request_headers);
  readHeaderTable(table, "set_response_headers", kComputedResponseFields,
                  action.set_response_headers);
  readRemovedHeaders(table, action);
  Milliseconds timeout = 0;
  if (table.readDuration("timeout", timeout)) {
    if (timeout == 0) {
      table.error(*table.get("timeout"), "timeout", "must be greater than zero");
    } else {
      action.timeout = timeout;
    }
  }
  table.readBool("via", action.via);
  table.readBool("websocket", action.websocket);
  if (table.readString("cache", action.cache)) {
    action.cache_where = table.get("cache")->where;
    if (action.cache.empty()) {
      table.error(*table.get("cache"), "cache", "must name a [cache.NAME] (leave it out for none)");
    }
  }
}

// An app's name as `scalwsctl app assign ... --as NAME` takes it.
bool isAppName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

void parseProxyAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                      RouteConfig& route) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  ProxyAction action;
  action.where = value.where;
  TableReader table(value, path, ctx);
  if (table.require("upstream") != nullptr) table.readString("upstream", action.upstream);
  readProxyOptions(table, action);
  table.finish();
  route.action = std::move(action);
}

void parseAppAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                    RouteConfig& route) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  ProxyAction action;
  action.where = value.where;
  TableReader table(value, path, ctx);
  if (table.require("name") != nullptr && table.readString("name", action.app) &&
      !isAppName(action.app)) {
    table.error(*table.get("name"), "name",
                "\"" + action.app + "\" is not an app name (1 to 64 letters, digits, '-', '_')");
  }
  readProxyOptions(table, action);
  table.finish();
  if (!ctx.options().apps_from_controller) {
    ctx.error(value.where,
              path +
                  ": apps are run by scalws-controller, and only its instances route to one "
                  "by name; a standalone scalwsd reaches a running app through a proxy route "
                  "to its sockets: proxy = { upstream = \"NAME\" } with [upstream.NAME] "
                  "servers = [\"unix:/run/scalws/apps/APP/0.sock\", ...] (`scalwsctl app "
                  "show APP` lists them)");
  }
  route.action = std::move(action);
}

}  // namespace scalws::common::config
