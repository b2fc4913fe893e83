// route.static: files served from a docroot through the open-file cache.
#include <algorithm>

#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"
#include "common/config/units.h"

namespace scalws::common::config {
namespace {

void readRoot(TableReader& table, StaticAction& action) {
  if (table.require("root") == nullptr) return;
  std::string root;
  if (!table.readString("root", root)) return;
  const ConfigValue& value = *table.get("root");
  // The docroot is opened once, before the sandbox, and never relative to a working
  // directory: a relative root is resolved against the config file's directory, like
  // every other path of a config (tls cert and key, logs).
  if (root.empty()) {
    table.error(value, "root", "must not be empty");
  } else if (root.find('\0') != std::string::npos) {
    table.error(value, "root", "must not contain NUL");
  } else {
    action.root = table.context().resolvePath(root);
  }
}

void readIndex(TableReader& table, StaticAction& action) {
  const ConfigValue* value = table.get("index");
  if (value == nullptr) return;
  std::vector<std::string> index;
  bool ok = forEachString(*value, table.keyPath("index"), table.context(),
                          [&](const ConfigValue& element, const std::string& path) {
                            const std::string& name = element.string;
                            if (name.empty() || name == "." || name == ".." ||
                                name.find_first_of(std::string("/\0", 2)) != std::string::npos) {
                              table.context().error(
                                  element.where,
                                  path + ": \"" + name + "\" is not a file name (no \"/\")");
                              return;
                            }
                            index.push_back(name);
                          });
  if (ok) action.index = std::move(index);
}

void readOpenFileCache(TableReader& table, StaticAction& action) {
  std::string mode;
  if (!table.readString("open_file_cache", mode)) return;
  const ConfigValue& value = *table.get("open_file_cache");
  OpenFileCacheConfig& cache = action.open_file_cache;
  constexpr std::string_view kValid = "valid:";
  if (mode == "off") {
    cache.mode = OpenFileCacheConfig::Mode::kOff;
  } else if (mode == "check") {
    cache.mode = OpenFileCacheConfig::Mode::kCheck;
  } else if (mode.starts_with(kValid)) {
    Result<uint64_t> ms = parseDurationMs(std::string_view(mode).substr(kValid.size()));
    if (!ms.ok()) {
      table.error(value, "open_file_cache", ms.status().message());
    } else if (*ms == 0) {
      table.error(value, "open_file_cache",
                  "the duration of \"valid:\" must be greater than zero (use \"check\" to "
                  "check every time)");
    } else {
      cache.mode = OpenFileCacheConfig::Mode::kValid;
      cache.valid_for = *ms;
    }
  } else {
    table.error(value, "open_file_cache",
                "unknown value \"" + mode +
                    "\" (expected \"off\", \"check\" or \"valid:<duration>\", e.g. "
                    "\"valid:30s\")");
  }
}

void readPrecompressed(TableReader& table, StaticAction& action) {
  const ConfigValue* value = table.get("precompressed");
  if (value == nullptr) return;
  std::vector<std::string> encodings;
  bool ok = forEachString(
      *value, table.keyPath("precompressed"), table.context(),
      [&](const ConfigValue& element, const std::string& path) {
        const std::string& encoding = element.string;
        if (encoding != "br" && encoding != "gzip") {
          table.context().error(element.where, path + ": unknown value \"" + encoding +
                                                   "\" (expected \"br\" or \"gzip\")");
        } else if (std::find(encodings.begin(), encodings.end(), encoding) != encodings.end()) {
          table.context().error(element.where, path + ": \"" + encoding + "\" is listed twice");
        } else {
          encodings.push_back(encoding);
        }
      });
  if (ok) action.precompressed = std::move(encodings);
}

void readMaxAge(TableReader& table, StaticAction& action) {
  uint64_t ms = 0;
  if (!table.readDuration("max_age", ms)) return;
  if (ms % 1000 != 0) {
    table.error(*table.get("max_age"), "max_age",
                "must be a whole number of seconds (Cache-Control: max-age counts seconds)");
    return;
  }
  action.max_age = ms / 1000;
}

// "text/html" or "text/html; charset=utf-8".
bool isMediaType(std::string_view text) {
  if (!isValidFieldValue(text)) return false;
  std::string_view essence = text.substr(0, text.find(';'));
  while (!essence.empty() && essence.back() == ' ') essence.remove_suffix(1);
  size_t slash = essence.find('/');
  return slash != std::string_view::npos && isHttpToken(essence.substr(0, slash)) &&
         isHttpToken(essence.substr(slash + 1));
}

void readTypes(TableReader& table, StaticAction& action) {
  const ConfigValue* value = table.get("types");
  if (value == nullptr) return;
  std::string path = table.keyPath("types");
  ParseContext& ctx = table.context();
  if (!expectType(*value, ConfigValue::Type::kTable, path, ctx)) return;
  for (const ConfigEntry& entry : value->entries) {
    std::string ext = toLowerAscii(entry.key);
    if (!ext.empty() && ext.front() == '.') ext.erase(0, 1);  // ".js" means "js"
    if (ext.empty() || !isHttpToken(ext) || ext.find('.') != std::string::npos) {
      ctx.error(entry.where,
                path + ": \"" + entry.key + "\" is not a file extension (expected e.g. \"js\")");
      continue;
    }
    if (action.types.count(ext) != 0) {
      ctx.error(entry.where, path + ": extension \"" + ext + "\" is listed twice");
      continue;
    }
    std::string type_path = path + "." + entry.key;
    if (!expectType(entry.value, ConfigValue::Type::kString, type_path, ctx)) continue;
    if (!isMediaType(entry.value.string)) {
      ctx.error(entry.value.where, type_path + ": \"" + entry.value.string +
                                       "\" is not a media type (expected e.g. \"text/html\")");
      continue;
    }
    action.types[ext] = entry.value.string;
  }
}

}  // namespace

void parseStaticAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                       RouteConfig& route) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  StaticAction action;
  TableReader table(value, path, ctx);
  readRoot(table, action);
  readIndex(table, action);
  readOpenFileCache(table, action);
  readPrecompressed(table, action);
  readMaxAge(table, action);
  readTypes(table, action);
  table.readEnum<FollowSymlinks>(
      "follow_symlinks", {{"never", FollowSymlinks::kNever}, {"beneath", FollowSymlinks::kBeneath}},
      action.follow_symlinks);
  table.readBool("allow_dotfiles", action.allow_dotfiles);
  table.finish();
  route.action = std::move(action);
}

}  // namespace scalws::common::config
