// Reason phrases for status codes (RFC 9110 §15).
#pragma once

#include <cstdint>
#include <string_view>

namespace scalws::worker {

std::string_view statusReason(uint16_t status);

// RFC 9110 §6.4.1: 1xx, 204 and 304 responses never carry content.
inline bool statusHasBody(uint16_t status) {
  return status >= 200 && status != 204 && status != 304;
}

}  // namespace scalws::worker
