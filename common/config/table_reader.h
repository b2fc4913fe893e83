// Reads one TOML table of a config, key by key, the way every section parser needs it:
// typed getters that record "expected X, found Y" and out-of-range errors in the
// ParseContext instead of stopping, and finish() reporting every key nobody asked for.
//
// A parser asks for every key it knows (present or not) before finish(): the keys asked
// for are the table's vocabulary, used for "unknown key" messages and suggestions.
// Messages read "<path>.<key>: <what is wrong>", located at the offending value; unknown
// keys are located at the key itself.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/config/config_value.h"
#include "common/config/parse_context.h"

namespace scalws::common::config {

// Checks on one value; `path` names it in messages ("server.workers", "listen.tls").
// Each returns false (after recording the error) when the value does not fit.
bool expectType(const ConfigValue& value, ConfigValue::Type type, const std::string& path,
                ParseContext& ctx);
bool readIntegerValue(const ConfigValue& value, int64_t min, int64_t max, const std::string& path,
                      ParseContext& ctx, int64_t& out);
// A size: a string per parseSize() or a non-negative integer number of bytes.
bool readSizeValue(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                   uint64_t& out);
// A duration: a string per parseDurationMs() or a non-negative integer number of seconds.
bool readDurationValue(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                       uint64_t& out_ms);
// Calls fn(element, element_path) for a lone string, or for each element of an array of
// strings ("route.match.host[1]"); a misfit is recorded and skipped. False when the value
// or any element was not a string.
template <typename Fn>
bool forEachString(const ConfigValue& value, const std::string& path, ParseContext& ctx, Fn&& fn) {
  if (value.is(ConfigValue::Type::kString)) {
    fn(value, path);
    return true;
  }
  if (!value.is(ConfigValue::Type::kArray)) {
    ctx.error(value.where, path + ": expected a string or an array of strings, found " +
                               std::string(describeType(value.type)));
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < value.array.size(); ++i) {
    std::string element_path = path + "[" + std::to_string(i) + "]";
    if (!expectType(value.array[i], ConfigValue::Type::kString, element_path, ctx)) {
      ok = false;
      continue;
    }
    fn(value.array[i], element_path);
  }
  return ok;
}
// A string, or an array of strings (a lone string becomes a list of one).
bool readStringListValue(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                         std::vector<std::string>& out);

template <typename E>
struct EnumChoice {
  std::string_view name;
  E value;
};

// `"a", "b" or "c"` for messages.
std::string describeChoices(const std::vector<std::string_view>& names);

class TableReader {
 public:
  // `table` is a kTable value that outlives the reader; `path` is "" for the root.
  TableReader(const ConfigValue& table, std::string path, ParseContext& ctx);
  TableReader(const TableReader&) = delete;
  TableReader& operator=(const TableReader&) = delete;

  // Marks `key` as known; its value, or null when absent.
  const ConfigValue* get(std::string_view key);
  // Like get(); records "missing required key" at the table when absent.
  const ConfigValue* require(std::string_view key);

  // Typed reads: `out` is set only when the key is present and its value fits; false
  // otherwise (a misfit is recorded as an error, absence is not).
  bool readString(std::string_view key, std::string& out);
  bool readBool(std::string_view key, bool& out);
  bool readSize(std::string_view key, uint64_t& out);
  bool readDuration(std::string_view key, uint64_t& out_ms);
  // A duration that must not be zero (a timeout of zero would fire before the first byte
  // could arrive); zero is recorded as an error.
  bool readPositiveDuration(std::string_view key, uint64_t& out_ms);
  bool readStringList(std::string_view key, std::vector<std::string>& out);
  template <typename T>
  bool readInteger(std::string_view key, int64_t min, int64_t max, T& out) {
    const ConfigValue* value = get(key);
    int64_t v = 0;
    if (value == nullptr || !readIntegerValue(*value, min, max, keyPath(key), ctx_, v)) {
      return false;
    }
    out = static_cast<T>(v);
    return true;
  }
  template <typename E>
  bool readEnum(std::string_view key, std::initializer_list<EnumChoice<E>> choices, E& out) {
    const ConfigValue* value = get(key);
    if (value == nullptr || !expectType(*value, ConfigValue::Type::kString, keyPath(key), ctx_)) {
      return false;
    }
    std::vector<std::string_view> names;
    for (const EnumChoice<E>& choice : choices) {
      if (choice.name == value->string) {
        out = choice.value;
        return true;
      }
      names.push_back(choice.name);
    }
    error(*value, key,
          "unknown value \"" + value->string + "\" (expected " + describeChoices(names) + ")");
    return false;
  }

  // Records "<path>.<key>: message" at `at`.
  void error(const ConfigValue& at, std::string_view key, const std::string& message);
  // Records "<path>: message" at the table itself.
  void tableError(const std::string& message);

  // Records an error for every key no get() asked for. Call once, after the reads.
  void finish();

  std::string keyPath(std::string_view key) const;
  const std::string& path() const { return path_; }
  const ConfigValue& table() const { return table_; }
  ParseContext& context() { return ctx_; }

 private:
  const ConfigValue& table_;
  std::string path_;
  ParseContext& ctx_;
  std::vector<std::string> known_;  // keys asked for, in order
  bool finished_ = false;
};

}  // namespace scalws::common::config
