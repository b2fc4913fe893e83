#include "common/config/config_value.h"

namespace scalws::common::config {

const ConfigEntry* ConfigValue::find(std::string_view key) const {
  for (const ConfigEntry& entry : entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

std::string_view describeType(ConfigValue::Type type) {
  switch (type) {
    case ConfigValue::Type::kString:
      return "a string";
    case ConfigValue::Type::kInteger:
      return "an integer";
    case ConfigValue::Type::kFloat:
      return "a float";
    case ConfigValue::Type::kBoolean:
      return "a boolean";
    case ConfigValue::Type::kDateTime:
      return "a date-time";
    case ConfigValue::Type::kArray:
      return "an array";
    case ConfigValue::Type::kTable:
      return "a table";
  }
  return "a value";
}

}  // namespace scalws::common::config
