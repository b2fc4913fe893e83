// Small character-level checks shared by the section parsers (HTTP tokens, header
// values, host names).
#pragma once

#include <string>
#include <string_view>

namespace scalws::common::config {

// RFC 9110 §5.6.2: token = 1*tchar.
bool isHttpToken(std::string_view text);
// A header value must not carry CR, LF or NUL (RFC 9110 §5.5); other controls are refused
// too, since nothing a config writes needs them.
bool isValidFieldValue(std::string_view text);
std::string toLowerAscii(std::string_view text);

}  // namespace scalws::common::config
