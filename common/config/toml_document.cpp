// The only file that includes toml++ (see toml_document.h).
#include "common/config/toml_document.h"

#include <algorithm>
#include <string>

#include "common/config/tomlplusplus.h"

namespace scalws::common::config {
namespace {

// toml++ bounds the nesting of inline values, not of dotted table headers ("[a.a.a...]");
// the tree is converted recursively, so bound it here too.
constexpr int kMaxDepth = 64;

class Converter {
 public:
  explicit Converter(std::string_view source_name) : file_(source_name) {}

  bool convert(const toml::node& node, int depth, ConfigValue& out) {
    out.where = locate(node.source());
    if (depth > kMaxDepth) {
      error_ = out.where.toString() + ": values are nested more than " + std::to_string(kMaxDepth) +
               " levels deep";
      return false;
    }
    switch (node.type()) {
      case toml::node_type::string:
        out.type = ConfigValue::Type::kString;
        out.string = node.as_string()->get();
        return true;
      case toml::node_type::integer:
        out.type = ConfigValue::Type::kInteger;
        out.integer = node.as_integer()->get();
        return true;
      case toml::node_type::floating_point:
        out.type = ConfigValue::Type::kFloat;
        out.floating = node.as_floating_point()->get();
        return true;
      case toml::node_type::boolean:
        out.type = ConfigValue::Type::kBoolean;
        out.boolean = node.as_boolean()->get();
        return true;
      case toml::node_type::date:
      case toml::node_type::time:
      case toml::node_type::date_time:
        out.type = ConfigValue::Type::kDateTime;
        return true;
      case toml::node_type::array:
        out.type = ConfigValue::Type::kArray;
        for (const toml::node& element : *node.as_array()) {
          out.array.emplace_back();
          if (!convert(element, depth + 1, out.array.back())) return false;
        }
        return true;
      case toml::node_type::table:
        out.type = ConfigValue::Type::kTable;
        return convertTable(*node.as_table(), depth, out);
      case toml::node_type::none:
        break;
    }
    error_ = out.where.toString() + ": unsupported TOML value";
    return false;
  }

  bool convertTable(const toml::table& table, int depth, ConfigValue& out) {
    for (const auto& [key, node] : table) {
      ConfigEntry entry;
      entry.key = std::string(key.str());
      entry.where = locate(key.source());
      if (!convert(node, depth + 1, entry.value)) return false;
      out.entries.push_back(std::move(entry));
    }
    // toml++ keeps keys sorted by name; messages and header order follow the file.
    std::stable_sort(out.entries.begin(), out.entries.end(),
                     [](const ConfigEntry& a, const ConfigEntry& b) {
                       if (a.where.line != b.where.line) return a.where.line < b.where.line;
                       return a.where.column < b.where.column;
                     });
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  SourceLocation locate(const toml::source_region& region) const {
    return SourceLocation{file_, region.begin.line, region.begin.column};
  }

  std::string file_;
  std::string error_;
};

}  // namespace

Result<ConfigValue> parseTomlDocument(std::string_view text, std::string_view source_name) {
  toml::parse_result parsed = toml::parse(text, source_name);
  if (!parsed) {
    const toml::parse_error& err = parsed.error();
    SourceLocation where{std::string(source_name), err.source().begin.line,
                         err.source().begin.column};
    return invalidArgument(where.toString() +
                           ": TOML syntax error: " + std::string(err.description()));
  }
  Converter converter(source_name);
  ConfigValue root;
  root.type = ConfigValue::Type::kTable;
  if (!converter.convertTable(parsed.table(), 0, root)) return invalidArgument(converter.error());
  root.where = SourceLocation{std::string(source_name), 1, 1};
  return root;
}

}  // namespace scalws::common::config
