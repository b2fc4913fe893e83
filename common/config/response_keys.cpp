// The response keys a route and [site] share: headers, errors, compress.
#include <algorithm>
#include <array>

#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {
namespace {

// Fields the server writes itself (framing, Date, Server from [server] server_header),
// hop-by-hop fields (RFC 9110 §7.6.1) and Content-Encoding, which compression decides: a
// copy from the config would make the response ambiguous (RFC 9112 §6.3) or wrong.
constexpr std::array<std::string_view, 10> kUneditableHeaders = {
    "content-length", "transfer-encoding", "connection", "date",    "server",
    "keep-alive",     "upgrade",           "te",         "trailer", "content-encoding"};

// The header name of `entry` lower-cased, or "" (after recording why) when it cannot be
// edited.
std::string headerName(std::string_view name, const SourceLocation& where, const std::string& path,
                       ParseContext& ctx) {
  if (!isHttpToken(name)) {
    ctx.error(where, path + ": \"" + std::string(name) + "\" is not a valid header name");
    return {};
  }
  std::string lower = toLowerAscii(name);
  for (std::string_view reserved : kUneditableHeaders) {
    if (lower != reserved) continue;
    ctx.error(where, path + ": \"" + std::string(name) +
                         "\" is written by the server itself and cannot be edited" +
                         (lower == "server" ? " (use [server] server_header)" : ""));
    return {};
  }
  return lower;
}

bool headerValue(const ConfigValue& value, const std::string& path, ParseContext& ctx) {
  if (!expectType(value, ConfigValue::Type::kString, path, ctx)) return false;
  if (!isValidFieldValue(value.string)) {
    ctx.error(value.where, path + ": must not contain CR, LF, NUL or other control characters");
    return false;
  }
  return true;
}

void readSet(TableReader& table, HeaderRulesConfig& rules) {
  const ConfigValue* value = table.get("set");
  if (value == nullptr) return;
  std::string path = table.keyPath("set");
  ParseContext& ctx = table.context();
  if (!expectType(*value, ConfigValue::Type::kTable, path, ctx)) return;
  for (const ConfigEntry& entry : value->entries) {
    std::string name = headerName(entry.key, entry.where, path, ctx);
    if (name.empty()) continue;
    bool twice = std::any_of(rules.set.begin(), rules.set.end(),
                             [&](const HeaderPair& h) { return h.name == name; });
    if (twice) {
      ctx.error(entry.where, path + ": \"" + entry.key + "\" is set twice (names ignore case)");
      continue;
    }
    if (!headerValue(entry.value, path + "." + entry.key, ctx)) continue;
    rules.set.push_back(HeaderPair{name, entry.value.string});
  }
}

void readAdd(TableReader& table, HeaderRulesConfig& rules) {
  const ConfigValue* value = table.get("add");
  if (value == nullptr) return;
  std::string path = table.keyPath("add");
  ParseContext& ctx = table.context();
  if (!expectType(*value, ConfigValue::Type::kTable, path, ctx)) return;
  for (const ConfigEntry& entry : value->entries) {
    std::string name = headerName(entry.key, entry.where, path, ctx);
    if (name.empty()) continue;
    // One field, or several of the same name (two Link fields).
    forEachString(entry.value, path + "." + entry.key, ctx,
                  [&](const ConfigValue& element, const std::string& element_path) {
                    if (headerValue(element, element_path, ctx)) {
                      rules.add.push_back(HeaderPair{name, element.string});
                    }
                  });
  }
}

void readRemove(TableReader& table, HeaderRulesConfig& rules) {
  const ConfigValue* value = table.get("remove");
  if (value == nullptr) return;
  ParseContext& ctx = table.context();
  forEachString(*value, table.keyPath("remove"), ctx,
                [&](const ConfigValue& element, const std::string& path) {
                  std::string name = headerName(element.string, element.where, path, ctx);
                  if (!name.empty()) rules.remove.push_back(std::move(name));
                });
}

void readHeaderRules(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                     ResponseConfig& out) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  TableReader table(value, path, ctx);
  HeaderRulesConfig rules;
  rules.where = value.where;
  readSet(table, rules);
  readAdd(table, rules);
  readRemove(table, rules);
  table.finish();
  out.headers = std::move(rules);
}

// "/errors/404.html" → "errors/404.html"; "" when it is not a plain path beneath a root.
std::string pagePath(std::string_view page) {
  if (page.size() < 2 || page[0] != '/' || page.back() == '/') return {};
  if (page.find('\0') != std::string_view::npos) return {};
  std::string_view rest = page.substr(1);
  size_t start = 0;
  while (start <= rest.size()) {
    size_t slash = rest.find('/', start);
    std::string_view segment = rest.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (segment.empty() || segment == "." || segment == "..") return {};
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return std::string(rest);
}

// "404" → {404, 0}; "5xx" → {0, 5}; {0, 0} when the key names no error status.
std::pair<uint16_t, uint8_t> errorKey(std::string_view key) {
  if (key.size() != 3 || (key[0] != '4' && key[0] != '5')) return {0, 0};
  if (key[1] == 'x' && key[2] == 'x') return {0, static_cast<uint8_t>(key[0] - '0')};
  if (key[1] < '0' || key[1] > '9' || key[2] < '0' || key[2] > '9') return {0, 0};
  return {static_cast<uint16_t>((key[0] - '0') * 100 + (key[1] - '0') * 10 + (key[2] - '0')), 0};
}

void readErrors(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                std::string_view default_root, ResponseConfig& out) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  ErrorPagesConfig errors;
  errors.where = value.where;
  std::string root(default_root);
  if (const ConfigEntry* entry = value.find("root")) {
    if (expectType(entry->value, ConfigValue::Type::kString, path + ".root", ctx)) {
      const std::string& text = entry->value.string;
      if (text.empty() || text.find('\0') != std::string::npos) {
        ctx.error(entry->value.where, path + ".root: must be a directory path");
      } else {
        root = ctx.resolvePath(text);
      }
    }
  }
  for (const ConfigEntry& entry : value.entries) {
    if (entry.key == "root") continue;
    auto [status, status_class] = errorKey(entry.key);
    if (status == 0 && status_class == 0) {
      ctx.error(entry.where, path + ": unknown key \"" + entry.key +
                                 "\" (expected root, a status from 400 to 599 such as \"404\", "
                                 "or a class: \"4xx\", \"5xx\")");
      continue;
    }
    std::string entry_path = path + "." + entry.key;
    if (!expectType(entry.value, ConfigValue::Type::kString, entry_path, ctx)) continue;
    std::string page = pagePath(entry.value.string);
    if (page.empty()) {
      ctx.error(entry.value.where,
                entry_path + ": \"" + entry.value.string +
                    "\" is not a page path (an absolute path beneath root, such as "
                    "\"/errors/404.html\", without \".\" or \"..\" segments)");
      continue;
    }
    errors.pages.push_back(
        ErrorPageConfig{status, status_class, std::move(page), root, entry.where});
  }
  if (!errors.pages.empty() && root.empty()) {
    ctx.error(value.where, path +
                               ": needs a root to read its pages beneath (errors.root, or a "
                               "static or php action's root, or [site] errors.root)");
    return;
  }
  errors.root = std::move(root);
  out.errors = std::move(errors);
}

const std::vector<std::pair<std::string_view, CompressEncoding>> kEncodings = {
    {"br", CompressEncoding::kBrotli},
    {"zstd", CompressEncoding::kZstd},
    {"gzip", CompressEncoding::kGzip}};

void readEncodings(TableReader& table, CompressConfig& config) {
  const ConfigValue* value = table.get("encodings");
  if (value == nullptr) return;
  ParseContext& ctx = table.context();
  std::vector<CompressEncoding> encodings;
  bool misfit = false;
  bool ok = forEachString(
      *value, table.keyPath("encodings"), ctx,
      [&](const ConfigValue& element, const std::string& path) {
        for (const auto& [name, encoding] : kEncodings) {
          if (element.string != name) continue;
          if (std::find(encodings.begin(), encodings.end(), encoding) != encodings.end()) {
            misfit = true;
            ctx.error(element.where, path + ": \"" + element.string + "\" is listed twice");
          } else {
            encodings.push_back(encoding);
          }
          return;
        }
        misfit = true;
        ctx.error(element.where, path + ": unknown encoding \"" + element.string +
                                     "\" (expected \"br\", \"zstd\" or \"gzip\")");
      });
  if (!ok || misfit) return;
  if (encodings.empty()) {
    table.error(*value, "encodings",
                "must name at least one encoding (compress = false turns "
                "compression off)");
    return;
  }
  config.encodings = std::move(encodings);
}

bool isCompressibleTypePattern(std::string_view type) {
  size_t slash = type.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == type.size()) return false;
  std::string_view sub = type.substr(slash + 1);
  return isHttpToken(type.substr(0, slash)) && (sub == "*" || isHttpToken(sub));
}

void readCompressTypes(TableReader& table, CompressConfig& config) {
  const ConfigValue* value = table.get("types");
  if (value == nullptr) return;
  ParseContext& ctx = table.context();
  std::vector<std::string> types;
  bool misfit = false;
  bool ok =
      forEachString(*value, table.keyPath("types"), ctx,
                    [&](const ConfigValue& element, const std::string& path) {
                      if (!isCompressibleTypePattern(element.string)) {
                        misfit = true;
                        ctx.error(element.where, path + ": \"" + element.string +
                                                     "\" is not a media type (\"text/html\", or "
                                                     "\"text/*\" for every text type)");
                        return;
                      }
                      types.push_back(toLowerAscii(element.string));
                    });
  if (!ok || misfit) return;
  if (types.empty()) {
    table.error(*value, "types",
                "must name at least one media type (compress = false turns "
                "compression off)");
    return;
  }
  config.types = std::move(types);
}

void readLevels(TableReader& table, CompressConfig& config) {
  const ConfigValue* value = table.get("level");
  if (value == nullptr) return;
  std::string path = table.keyPath("level");
  if (!expectType(*value, ConfigValue::Type::kTable, path, table.context())) return;
  TableReader levels(*value, path, table.context());
  levels.readInteger("gzip", 1, 9, config.gzip_level);
  levels.readInteger("br", 0, 11, config.brotli_level);
  levels.readInteger("zstd", 1, 19, config.zstd_level);
  levels.finish();
}

void readCompress(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                  ResponseConfig& out) {
  CompressConfig config;
  config.where = value.where;
  if (value.is(ConfigValue::Type::kBoolean)) {
    config.enabled = value.boolean;
    out.compress = std::move(config);
    return;
  }
  if (!value.is(ConfigValue::Type::kTable)) {
    ctx.error(value.where, path + ": expected true, false or a table, found " +
                               std::string(describeType(value.type)));
    return;
  }
  TableReader table(value, path, ctx);
  readEncodings(table, config);
  readCompressTypes(table, config);
  table.readSize("min_size", config.min_size);
  readLevels(table, config);
  table.finish();
  out.compress = std::move(config);
}

}  // namespace

void parseResponseKeys(TableReader& table, std::string_view default_error_root,
                       ResponseConfig& out) {
  ParseContext& ctx = table.context();
  if (const ConfigValue* value = table.get("headers")) {
    readHeaderRules(*value, table.keyPath("headers"), ctx, out);
  }
  if (const ConfigValue* value = table.get("errors")) {
    readErrors(*value, table.keyPath("errors"), ctx, default_error_root, out);
  }
  if (const ConfigValue* value = table.get("compress")) {
    readCompress(*value, table.keyPath("compress"), ctx, out);
  }
}

}  // namespace scalws::common::config
