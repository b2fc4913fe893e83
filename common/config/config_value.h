// A parsed TOML document as plain values, so that only toml_document.cpp includes toml++
// (heavy to compile) and every section parser works on one small, position-carrying tree.
//
// Built once by parseTomlDocument() and read by the section parsers; owns all its data.
// Table entries keep the order in which their keys appear in the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/site_config.h"

namespace scalws::common::config {

struct ConfigEntry;

struct ConfigValue {
  enum class Type { kString, kInteger, kFloat, kBoolean, kDateTime, kArray, kTable };

  Type type = Type::kTable;
  SourceLocation where;              // where the value begins ("[server]" for a table header)
  std::string string;                // kString; kDateTime as written by toml++
  int64_t integer = 0;               // kInteger
  double floating = 0;               // kFloat
  bool boolean = false;              // kBoolean
  std::vector<ConfigValue> array;    // kArray
  std::vector<ConfigEntry> entries;  // kTable, in file order

  bool is(Type t) const { return type == t; }
  // The entry named `key`, or null.
  const ConfigEntry* find(std::string_view key) const;
};

struct ConfigEntry {
  std::string key;
  SourceLocation where;  // where the key is written
  ConfigValue value;
};

// "a string", "an integer", ... for messages.
std::string_view describeType(ConfigValue::Type type);

}  // namespace scalws::common::config
