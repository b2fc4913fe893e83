// Reason phrases for status codes (RFC 9110 §15).
#pragma once

#include <cstdint>
#include <string_view>

namespace scalws::worker {

std::string_view statusReason(uint16_t status);

}  // namespace scalws::worker
