// The one boundary to toml++: text in, a ConfigValue tree (or the syntax error) out.
#pragma once

#include <string_view>

#include "common/config/config_value.h"
#include "common/status.h"

namespace scalws::common::config {

// Parses `text`; `source_name` names the file in every location. A syntax error comes
// back as kInvalidArgument "source_name:line:col: TOML syntax error: ...". The root table
// is located at line 1, column 1.
Result<ConfigValue> parseTomlDocument(std::string_view text, std::string_view source_name);

}  // namespace scalws::common::config
