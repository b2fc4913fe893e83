// route.php: PHP scripts beneath a root, run on a [php_pool.NAME] over FastCGI.
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {
namespace {

bool endsWithPhp(std::string_view s) {
  return s.size() > 4 && s.ends_with(".php");
}

void readRoot(TableReader& table, PhpAction& action) {
  const ConfigValue* value = table.require("root");
  std::string root;
  if (value == nullptr || !table.readString("root", root)) return;
  // Opened once before the sandbox; never relative to a cwd the instance does not control.
  if (root.empty() || root.front() != '/') {
    table.error(*value, "root", "must be an absolute path, found \"" + root + "\"");
  } else if (root.find('\0') != std::string::npos) {
    table.error(*value, "root", "must not contain NUL");
  } else {
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    action.root = std::move(root);
  }
}

void readIndex(TableReader& table, PhpAction& action) {
  std::string index;
  if (!table.readString("index", index)) return;
  const ConfigValue& value = *table.get("index");
  if (!index.empty() &&
      (index.find_first_of(std::string("/\0", 2)) != std::string::npos || !endsWithPhp(index))) {
    table.error(value, "index",
                "\"" + index + "\" is not a .php file name (no \"/\"; empty for none)");
    return;
  }
  action.index = std::move(index);
}

void readFrontController(TableReader& table, PhpAction& action) {
  std::string fc;
  if (!table.readString("front_controller", fc)) return;
  const ConfigValue& value = *table.get("front_controller");
  bool dot_segment = fc.find("/.") != std::string::npos;
  if (fc.empty() || fc.front() != '/' || !endsWithPhp(fc) || dot_segment ||
      fc.find('\0') != std::string::npos || fc.find("//") != std::string::npos) {
    table.error(value, "front_controller",
                "must be a script path from the root like \"/index.php\", found \"" + fc + "\"");
    return;
  }
  action.front_controller = std::move(fc);
}

}  // namespace

void parsePhpAction(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                    RouteConfig& route) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  PhpAction action;
  action.where = value.where;
  TableReader table(value, path, ctx);
  if (table.require("pool") != nullptr) table.readString("pool", action.pool);
  readRoot(table, action);
  readIndex(table, action);
  readFrontController(table, action);
  table.finish();
  route.action = std::move(action);
}

}  // namespace scalws::common::config
