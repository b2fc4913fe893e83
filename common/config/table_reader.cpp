#include "common/config/table_reader.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/config/units.h"

namespace scalws::common::config {
namespace {

std::string describeRange(int64_t min, int64_t max, int64_t found) {
  std::string f = std::to_string(found);
  if (min == 0 && found < 0 && max == std::numeric_limits<int64_t>::max()) {
    return "must not be negative, found " + f;
  }
  if (max == std::numeric_limits<int64_t>::max()) {
    return "must be at least " + std::to_string(min) + ", found " + f;
  }
  return "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", found " + f;
}

// Edit distance counting a swap of neighbours as one edit (optimal string alignment), for
// "did you mean" on misspelt keys.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// Two edits turn one short word into an unrelated one ("code" into "body").
size_t suggestionLimit(std::string_view known) {
  return known.size() <= 4 ? 1 : 2;
}

}  // namespace

bool expectType(const ConfigValue& value, ConfigValue::Type type, const std::string& path,
                ParseContext& ctx) {
  if (value.is(type)) return true;
  ctx.error(value.where, path + ": expected " + std::string(describeType(type)) + ", found " +
                             std::string(describeType(value.type)));
  return false;
}

bool readIntegerValue(const ConfigValue& value, int64_t min, int64_t max, const std::string& path,
                      ParseContext& ctx, int64_t& out) {
  if (!expectType(value, ConfigValue::Type::kInteger, path, ctx)) return false;
  if (value.integer < min || value.integer > max) {
    ctx.error(value.where, path + ": " + describeRange(min, max, value.integer));
    return false;
  }
  out = value.integer;
  return true;
}

bool readSizeValue(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                   uint64_t& out) {
  if (value.is(ConfigValue::Type::kInteger)) {
    if (value.integer < 0) {
      ctx.error(value.where,
                path + ": " + describeRange(0, std::numeric_limits<int64_t>::max(), value.integer));
      return false;
    }
    out = static_cast<uint64_t>(value.integer);
    return true;
  }
  if (value.is(ConfigValue::Type::kString)) {
    Result<uint64_t> size = parseSize(value.string);
    if (!size.ok()) {
      ctx.error(value.where, path + ": " + size.status().message());
      return false;
    }
    out = *size;
    return true;
  }
  ctx.error(value.where, path +
                             ": expected a size (a string such as \"10m\" or an integer number "
                             "of bytes), found " +
                             std::string(describeType(value.type)));
  return false;
}

bool readDurationValue(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                       uint64_t& out_ms) {
  if (value.is(ConfigValue::Type::kInteger)) {
    uint64_t ms = 0;
    if (value.integer < 0) {
      ctx.error(value.where,
                path + ": " + describeRange(0, std::numeric_limits<int64_t>::max(), value.integer));
      return false;
    }
    if (__builtin_mul_overflow(static_cast<uint64_t>(value.integer), uint64_t{1000}, &ms)) {
      ctx.error(value.where,
                path + ": duration of " + std::to_string(value.integer) + " seconds is too large");
      return false;
    }
    out_ms = ms;
    return true;
  }
  if (value.is(ConfigValue::Type::kString)) {
    Result<uint64_t> ms = parseDurationMs(value.string);
    if (!ms.ok()) {
      ctx.error(value.where, path + ": " + ms.status().message());
      return false;
    }
    out_ms = *ms;
    return true;
  }
  ctx.error(value.where, path +
                             ": expected a duration (a string such as \"30s\" or an integer "
                             "number of seconds), found " +
                             std::string(describeType(value.type)));
  return false;
}

bool readStringListValue(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                         std::vector<std::string>& out) {
  std::vector<std::string> list;
  bool ok = forEachString(value, path, ctx, [&](const ConfigValue& element, const std::string&) {
    list.push_back(element.string);
  });
  if (ok) out = std::move(list);
  return ok;
}

std::string describeChoices(const std::vector<std::string_view>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += "\"";
    text += names[i];
    text += "\"";
  }
  return text;
}

TableReader::TableReader(const ConfigValue& table, std::string path, ParseContext& ctx)
    : table_(table), path_(std::move(path)), ctx_(ctx) {}

const ConfigValue* TableReader::get(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  const ConfigEntry* entry = table_.find(key);
  return entry == nullptr ? nullptr : &entry->value;
}

const ConfigValue* TableReader::require(std::string_view key) {
  const ConfigValue* value = get(key);
  if (value == nullptr) tableError("missing required key \"" + std::string(key) + "\"");
  return value;
}

bool TableReader::readString(std::string_view key, std::string& out) {
  const ConfigValue* value = get(key);
  if (value == nullptr || !expectType(*value, ConfigValue::Type::kString, keyPath(key), ctx_)) {
    return false;
  }
  out = value->string;
  return true;
}

bool TableReader::readBool(std::string_view key, bool& out) {
  const ConfigValue* value = get(key);
  if (value == nullptr || !expectType(*value, ConfigValue::Type::kBoolean, keyPath(key), ctx_)) {
    return false;
  }
  out = value->boolean;
  return true;
}

bool TableReader::readSize(std::string_view key, uint64_t& out) {
  const ConfigValue* value = get(key);
  return value != nullptr && readSizeValue(*value, keyPath(key), ctx_, out);
}

bool TableReader::readDuration(std::string_view key, uint64_t& out_ms) {
  const ConfigValue* value = get(key);
  return value != nullptr && readDurationValue(*value, keyPath(key), ctx_, out_ms);
}

bool TableReader::readPositiveDuration(std::string_view key, uint64_t& out_ms) {
  uint64_t ms = 0;
  if (!readDuration(key, ms)) return false;
  if (ms == 0) {
    error(*get(key), key, "must be greater than zero");
    return false;
  }
  out_ms = ms;
  return true;
}

bool TableReader::readStringList(std::string_view key, std::vector<std::string>& out) {
  const ConfigValue* value = get(key);
  return value != nullptr && readStringListValue(*value, keyPath(key), ctx_, out);
}

void TableReader::error(const ConfigValue& at, std::string_view key, const std::string& message) {
  ctx_.error(at.where, keyPath(key) + ": " + message);
}

void TableReader::tableError(const std::string& message) {
  ctx_.error(table_.where, (path_.empty() ? std::string() : path_ + ": ") + message);
}

void TableReader::finish() {
  if (finished_) return;
  finished_ = true;
  for (const ConfigEntry& entry : table_.entries) {
    if (std::find(known_.begin(), known_.end(), entry.key) != known_.end()) continue;
    std::string message =
        (path_.empty() ? std::string() : path_ + ": ") + "unknown key \"" + entry.key + "\"";
    const std::string* closest = nullptr;
    size_t best = SIZE_MAX;
    // Keys are short; a long unknown key is no misspelling and would cost a large table.
    for (const std::string& known : known_) {
      if (entry.key.size() > known.size() + 2) continue;
      size_t distance = editDistance(entry.key, known);
      if (distance <= suggestionLimit(known) && distance < best) {
        best = distance;
        closest = &known;
      }
    }
    if (closest != nullptr) {
      message += " (did you mean \"" + *closest + "\"?)";
    } else if (!known_.empty()) {
      message += " (expected one of: ";
      for (size_t i = 0; i < known_.size(); ++i) {
        if (i > 0) message += ", ";
        message += known_[i];
      }
      message += ")";
    }
    ctx_.error(entry.where, std::move(message));
  }
}

std::string TableReader::keyPath(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

}  // namespace scalws::common::config
