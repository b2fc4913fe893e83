// Sizes ("64k", "10m", "1g", plain integers are bytes) and durations ("30s", "500ms",
// "2m", "1h", "1d"; plain integers are seconds) as written in a config.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace scalws::common::config {

Result<uint64_t> parseSize(std::string_view text);
Result<uint64_t> parseDurationMs(std::string_view text);

}  // namespace scalws::common::config
