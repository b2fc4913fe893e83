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
// A server name as TLS (RFC 6066 §3: a DNS name, never an IP literal) and a shared address
// know it: lower-case, with an optional leading "*." that stands for exactly one label.
// "" when it is one, else why not.
std::string checkServerName(const std::string& name);

}  // namespace scalws::common::config
