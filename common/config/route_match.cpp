// route.match: which requests a route takes (path exact/prefix/suffix/regex, host, method,
// scheme).
#include <arpa/inet.h>

#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {
namespace {

// A request target never holds spaces or control bytes (RFC 9112 §3.2), so a path that
// does could never match.
bool isPathText(std::string_view text) {
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  return true;
}

void readPath(TableReader& table, std::string_view key, bool absolute,
              std::optional<std::string>& out) {
  std::string path;
  if (!table.readString(key, path)) return;
  const ConfigValue& value = *table.get(key);
  if (absolute && (path.empty() || path.front() != '/')) {
    table.error(value, key, "must start with \"/\", found \"" + path + "\"");
  } else if (path.empty()) {
    table.error(value, key, "must not be empty");
  } else if (!isPathText(path)) {
    table.error(value, key, "must not contain spaces or control characters");
  } else {
    out = std::move(path);
  }
}

bool isHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

// Returns an empty string when `host` (lower-cased) is acceptable, else what is wrong.
std::string checkHost(const std::string& host) {
  if (host.empty()) return "must not be empty";
  if (host.front() == '[') {
    unsigned char bytes[16];
    std::string inner = host.substr(1, host.size() >= 2 ? host.size() - 2 : 0);
    if (host.back() == ']' && inner.find('\0') == std::string::npos &&
        inet_pton(AF_INET6, inner.c_str(), bytes) == 1) {
      return {};
    }
    if (host.find("]:") != std::string::npos) {
      return "\"" + host + "\" must not include a port (the host alone is matched)";
    }
    return "\"" + host + "\" is not a valid bracketed IPv6 address";
  }
  if (host.find(':') != std::string::npos) {
    return "\"" + host + "\" must not include a port (the host alone is matched)";
  }
  std::string_view name = host;
  if (name.size() > 2 && name.substr(0, 2) == "*.") name.remove_prefix(2);
  if (name.front() == '.' || name.back() == '.' || name.find("..") != std::string_view::npos) {
    return "\"" + host + "\" is not a valid host name";
  }
  for (char c : name) {
    if (c == '*') {
      return "\"" + host + "\": a wildcard is only allowed as a leading \"*.\" (\"*.example.com\")";
    }
    if (!isHostChar(c)) return "\"" + host + "\" is not a valid host name";
  }
  return {};
}

void readHosts(TableReader& table, MatchConfig& match) {
  const ConfigValue* value = table.get("host");
  if (value == nullptr) return;
  std::vector<std::string> hosts;
  bool ok = forEachString(*value, table.keyPath("host"), table.context(),
                          [&](const ConfigValue& element, const std::string& path) {
                            std::string host = toLowerAscii(element.string);
                            std::string problem = checkHost(host);
                            if (!problem.empty()) {
                              table.context().error(element.where, path + ": " + problem);
                              return;
                            }
                            hosts.push_back(std::move(host));
                          });
  if (!ok) return;
  if (value->is(ConfigValue::Type::kArray) && value->array.empty()) {
    table.error(*value, "host", "must not be an empty array (leave host out to match any host)");
    return;
  }
  match.hosts = std::move(hosts);
}

bool hasLowerCase(std::string_view text) {
  for (char c : text) {
    if (c >= 'a' && c <= 'z') return true;
  }
  return false;
}

void readMethods(TableReader& table, MatchConfig& match) {
  const ConfigValue* value = table.get("method");
  if (value == nullptr) return;
  std::vector<std::string> methods;
  bool ok = forEachString(
      *value, table.keyPath("method"), table.context(),
      [&](const ConfigValue& element, const std::string& path) {
        const std::string& method = element.string;
        if (!isHttpToken(method)) {
          table.context().error(element.where,
                                path + ": \"" + method + "\" is not a valid method token");
        } else if (hasLowerCase(method)) {
          // RFC 9110 §9.1: methods are case-sensitive; "get" is not GET.
          table.context().error(element.where, path + ": \"" + method +
                                                   "\" must be upper-case (methods are "
                                                   "case-sensitive)");
        } else {
          methods.push_back(method);
        }
      });
  if (!ok) return;
  if (value->is(ConfigValue::Type::kArray) && value->array.empty()) {
    table.error(*value, "method",
                "must not be an empty array (leave method out to match any method)");
    return;
  }
  match.methods = std::move(methods);
}

// Compiled here, so a bad pattern is refused with the file's position like any other
// mistake; the snapshot shares the compiled code.
void readRegex(TableReader& table, MatchConfig& match) {
  std::string pattern;
  if (!table.readString("regex", pattern)) return;
  const ConfigValue& value = *table.get("regex");
  if (pattern.empty()) {
    table.error(value, "regex", "must not be empty (leave regex out to match any path)");
    return;
  }
  Result<std::shared_ptr<const Regex>> regex = Regex::compile(pattern);
  if (!regex.ok()) {
    table.error(value, "regex", "invalid regular expression: " + regex.status().message());
    return;
  }
  match.regex = std::move(regex).value();
  match.regex_text = std::move(pattern);
}

}  // namespace

void parseRouteMatch(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                     MatchConfig& match) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  TableReader table(value, path, ctx);
  readPath(table, "exact", true, match.exact);
  readPath(table, "prefix", true, match.prefix);
  readPath(table, "suffix", false, match.suffix);
  if (table.get("exact") != nullptr &&
      (table.get("prefix") != nullptr || table.get("suffix") != nullptr)) {
    table.tableError("exact cannot be combined with prefix or suffix (it already names one path)");
  }
  readRegex(table, match);
  readHosts(table, match);
  readMethods(table, match);
  table.readEnum<MatchConfig::Scheme>(
      "scheme", {{"http", MatchConfig::Scheme::kHttp}, {"https", MatchConfig::Scheme::kHttps}},
      match.scheme);
  table.finish();
}

}  // namespace scalws::common::config
