// The small value types every part of the site config model shares: where a value was
// written, durations and sizes, and a header name with its value.
#pragma once

#include <cstdint>
#include <string>

namespace scalws::common::config {

// Where a value came from, for messages: "site.toml:12:3".
struct SourceLocation {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string toString() const;
};

using Milliseconds = uint64_t;
using Bytes = uint64_t;

struct HeaderPair {
  std::string name;
  std::string value;
};

}  // namespace scalws::common::config
